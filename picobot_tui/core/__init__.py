"""The agent core. It must never import textual, rich or (at import time) litellm."""
