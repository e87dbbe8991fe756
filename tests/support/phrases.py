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

# Utterances with a thinking pause mid-sentence (head, tail): a turn that ends at the pause is
# premature. The heads trail off (a preposition, an
# article, a verb waiting for its object), except the last two, which could be complete.
PAUSED = [
    ("What is the capital of", "France?"),
    ("Tell me about", "the moon and the stars."),
    ("I was wondering if", "you could tell me a joke."),
    ("Can you help me with", "my homework?"),
    ("Set a timer for", "ten minutes."),
    ("Remind me to call", "my mother tomorrow."),
    ("How do I make", "a cup of tea?"),
    ("Please turn on the", "lights in the kitchen."),
    ("Play some music by", "the Beatles."),
    ("What is the weather like in", "Paris today?"),
    ("Tell me something interesting", "about the ocean."),
    ("What should I cook", "for dinner tonight?"),
]

# More commands for the STT word-error-rate set (PHRASES + these, in several voices).
STT_EXTRA = [
    "The weather tomorrow will be sunny and warm.",
    "Open the window in the living room.",
    "Who wrote the play Romeo and Juliet?",
    "Add milk and eggs to my shopping list.",
    "How far away is the nearest star?",
    "Play the next song on the radio.",
    "What should I cook for dinner tonight?",
    "Call my brother when I get home.",
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
