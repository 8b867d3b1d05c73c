"""Headless reproduction of the paper's figures: ``python -m paper --figure 2a --out results/``."""
