"""Benchmarks: ``python -m benchmarks NAME [options]`` runs ``benchmarks/NAME.py``'s ``main``."""
