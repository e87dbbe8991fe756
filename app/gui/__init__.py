"""PySide6 desktop window. Adapts the loop's events to Qt; never touches llama, whisper or audio."""
