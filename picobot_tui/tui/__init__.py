"""The Textual app: the app, its event router (the one writer to the panes), commands,
session switching, the approval modal helper, the start-up peek and the GC policies."""
