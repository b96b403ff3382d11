"""picobot's benchmark suite: one module per figure of issue #4, run by `python -m bench`."""
