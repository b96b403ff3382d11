"""The headless front ends, peers that import nothing of each other: `-m` text (text.py) and
the `--json` lines protocol (json_protocol.py)."""
