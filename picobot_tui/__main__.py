"""`python -m picobot_tui` runs the CLI."""

from picobot_tui.cli import main

if __name__ == "__main__":
    main()
