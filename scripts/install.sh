#!/usr/bin/env bash
# install.sh — build avtool (release, Swift runtime linked in) and install it.
#
# Usage: scripts/install.sh [PREFIX]               install under PREFIX (default /usr/local)
#        scripts/install.sh --uninstall [PREFIX]   remove what an install put there
#        scripts/install.sh --stage DIR [PREFIX]   install into DIR/PREFIX (for packaging)
#
# Installs:
#   PREFIX/bin/avtool                                 the binary (needs only the FFmpeg 5.1 libraries)
#   PREFIX/share/man/man1/avtool.1                    the manual (from the command definitions)
#   PREFIX/share/bash-completion/completions/avtool   bash completion
#   PREFIX/share/zsh/site-functions/_avtool           zsh completion
#   PREFIX/share/fish/vendor_completions.d/avtool.fish  fish completion
#   PREFIX/share/avtool/commit                        the commit built (avtool --version shows it)
#   PREFIX/share/avtool/installed-files               the list --uninstall removes
#
# The build lives in .build/static (the Swift standard library and Foundation
# linked statically), apart from the development build in .build/.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=install
stage=""
case "${1:-}" in
    --uninstall) mode=uninstall; shift ;;
    --stage) stage="${2:?--stage needs a directory}"; shift 2 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
prefix="${1:-/usr/local}"
[[ "$prefix" == /* ]] || prefix="$(pwd)/$prefix"
root="$stage$prefix"
manifest="$root/share/avtool/installed-files"

say() { printf 'install.sh: %s\n' "$*" >&2; }

if [[ $mode == uninstall ]]; then
    [[ -f "$manifest" ]] || { say "nothing installed under $prefix (no $manifest)"; exit 1; }
    while IFS= read -r f; do
        rm -f "$root/$f"
    done <"$manifest"
    rm -f "$manifest"
    rmdir "$root/share/avtool" 2>/dev/null || true
    say "removed avtool from $prefix"
    exit 0
fi

command -v swift >/dev/null || { say "swift is not on PATH"; exit 1; }
scratch="$repo/.build/static"
say "building (release, static Swift runtime) in $scratch"
swift build --package-path "$repo" --scratch-path "$scratch" -c release --product avtool --static-swift-stdlib >&2
# swift-argument-parser's manual generator (it reads the binary's command definitions).
swift build --package-path "$repo" --scratch-path "$scratch" -c release --product generate-manual >&2
bin="$scratch/release/avtool"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say "generating the manual and completions"
"$scratch/release/generate-manual" "$bin" --output-directory "$work" >&2
[[ -f "$work/avtool.1" ]] || { say "the manual was not generated"; exit 1; }
for shell in bash zsh fish; do
    "$bin" --generate-completion-script "$shell" >"$work/completion.$shell"
done

files=(
    "bin/avtool"
    "share/man/man1/avtool.1"
    "share/bash-completion/completions/avtool"
    "share/zsh/site-functions/_avtool"
    "share/fish/vendor_completions.d/avtool.fish"
    "share/avtool/commit"
)
install -D -m 755 "$bin" "$root/bin/avtool"
install -D -m 644 "$work/avtool.1" "$root/share/man/man1/avtool.1"
install -D -m 644 "$work/completion.bash" "$root/share/bash-completion/completions/avtool"
install -D -m 644 "$work/completion.zsh" "$root/share/zsh/site-functions/_avtool"
install -D -m 644 "$work/completion.fish" "$root/share/fish/vendor_completions.d/avtool.fish"
mkdir -p "$root/share/avtool"
git -C "$repo" rev-parse --short=12 HEAD >"$root/share/avtool/commit" 2>/dev/null || echo unknown >"$root/share/avtool/commit"
printf '%s\n' "${files[@]}" >"$manifest"
say "installed avtool into $prefix$([[ -n $stage ]] && echo " (staged in $stage)")"
"$root/bin/avtool" --version | head -1 >&2
