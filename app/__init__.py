"""talk-llama desktop: an offline voice assistant (whisper.cpp + llama.cpp + pyttsx3)."""

__version__ = "0.1.0"
