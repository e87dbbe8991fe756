"""Things the assistant does rather than says: timers, reminders and alarms, the time and date,
sums and units, lists, opening an app after a yes, the voice's volume.

`intents.py` reads a request from the user's words (Home Assistant's sentence matcher and its
sentences, plus the app's own in assets/intents); `skills.py` carries it out and words the
answer; `timers.py`, `reminding.py` + `reminders.py` + `when.py`, `calc.py`, `clock.py`,
`lists.py`, `controls.py` + `launch.py` are the tools. Nothing here imports Qt or the loop:
`app.loop.responder` asks `Actions` before the model, on the llm thread (docs/actions.md).
"""
