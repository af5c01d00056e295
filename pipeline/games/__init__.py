"""Games with decisions (chemin de fer): strategies as data, the exact value of a strategy pair,
and the equilibria of the game."""
