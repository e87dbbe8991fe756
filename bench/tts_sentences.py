"""The fixed sentences bench.tts speaks with each engine to measure how well whisper hears them:
numbers, names, dates, questions, URLs, abbreviations and plain talk (44 sentences), written as
a reply would be (digits, "Dr.", a link): each engine gets `speakable()` of it, as in the app."""

SENTENCES = (
    # numbers and money
    "The meeting is on the third floor, room 42.",
    "It costs $19.99 at the corner shop.",
    "There are 365 days in a year and 24 hours in a day.",
    "Please call me back at 5 o'clock.",
    "The population is about 8 million people.",
    "Add 17 and 25 to get 42.",
    "The train leaves at 7:30 in the morning.",
    "She ran 10 kilometers in 48 minutes.",
    # names and places
    "My name is Margaret and I live in Edinburgh.",
    "Anna and Michael drove from Boston to Chicago.",
    "Dr. Patel will see you on Tuesday.",
    "The Amazon is the largest rainforest on Earth.",
    "Tokyo, Paris and Nairobi are capital cities.",
    "Ask Jennifer whether Thomas has the keys.",
    # dates and times
    "My birthday is on the 4th of July.",
    "The concert starts on Friday evening at eight.",
    "We moved here in the spring of 2019.",
    "The deadline is the end of next month.",
    "Today is Wednesday, the second of December.",
    # questions
    "What is the capital of Australia?",
    "How long does it take to boil an egg?",
    "Can you remind me to buy milk tomorrow?",
    "Why is the sky blue during the day?",
    "Where did I leave my glasses?",
    "Would you like some tea or coffee?",
    "Is it going to rain this afternoon?",
    # a URL, abbreviations, symbols
    "You can read more at https://www.example.com/docs today.",
    "The recipe is on https://en.wikipedia.org/wiki/Soup right now.",
    "Mr. Brown works for the BBC in London.",
    "Send the report to the HR team by noon.",
    "The temperature dropped below zero last night.",
    # plain talk
    "I think we should leave a little earlier today.",
    "Thank you so much for your help yesterday.",
    "The cat is sleeping on the warm windowsill.",
    "Turn left at the bakery and then go straight ahead.",
    "Could you speak a little more slowly, please?",
    "The soup needs more salt and a bit of pepper.",
    "My phone battery is almost empty.",
    "Let's watch a movie after dinner tonight.",
    "The library closes early on Sundays.",
    "He forgot his umbrella at the station again.",
    "The children are playing football in the park.",
    "I would like a window seat, please.",
    "Remember to water the plants while I'm away.",
)
