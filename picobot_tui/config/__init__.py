"""Configuration: config.json (JSONC) and PICOBOT_* variables loaded with pydantic-settings
into the core's settings, the onboarding file, and the allow-lists an approval remembers."""
