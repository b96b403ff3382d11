"""Baseline programs the figures are compared against (run as scripts)."""
