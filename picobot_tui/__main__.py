"""`python -m picobot_tui` runs the CLI (through the warm server when it can)."""

from picobot_tui.entry import main

if __name__ == "__main__":
    main()
