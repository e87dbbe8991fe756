"""PySide6 desktop window. Adapts core events to Qt; never touches llama, whisper or audio."""
