#ifndef AVTOOL_CYAML_SHIM_H
#define AVTOOL_CYAML_SHIM_H

// libyaml (Debian's libyaml-dev, pkg-config yaml-0.1): the event parser recipes are read with.
#include <yaml.h>

#endif
