"""The host the app runs on, under every stage: its CPUs and how busy they are (`cpu`), the
app's folders and private files (`paths`), the log and native stderr capture (`logs`), the
bundle's start-up (`frozen`), the sound server and its devices (`pulse_watch`, `sound_devices`).

Imports no stage; any layer may import it. No threads of its own except `pulse_watch`'s listener.
"""
