print("avtool")
