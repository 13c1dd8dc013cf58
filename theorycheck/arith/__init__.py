"""Arithmetic at the bottom of the house: numbers as typed, read exactly (:mod:`.exact`), decimals rounded
outwards (:mod:`.decimals`) and arb balls (:mod:`.balls`). Imports nothing above the words."""
