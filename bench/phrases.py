"""Spoken test phrases shared by the STT/latency benchmarks and tests (espeak-ng friendly)."""

PHRASES = [
    "Turn on the lights in the kitchen, please.",
    "What is the capital of France?",
    "Please tell me a short joke about cats.",
    "How many days are there in a week?",
    "Set a timer for ten minutes.",
    "What time is it right now?",
    "Can you recommend a good book to read?",
    "I would like to listen to some music.",
    "Tell me something interesting about the moon.",
    "How do I make a cup of tea?",
    "What is your favorite color?",
    "Remind me to call my mother tomorrow.",
]

# Topics for scripted text turns (context benchmark and conversation tests).
TOPICS = [
    "apples",
    "rivers",
    "guitars",
    "mountains",
    "pencils",
    "windows",
    "tigers",
    "candles",
    "rockets",
    "bread",
    "clouds",
    "bicycles",
    "oceans",
    "owls",
    "trains",
    "coffee",
]
