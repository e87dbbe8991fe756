"""Ears: microphone audio in, user text out.

Takes: sound from an input device (sounddevice), 16 kHz mono float32 blocks.
Gives: utterances (push-to-talk spans or hands-free segments cut by voice activity), the echo
guard's barge-in verdicts, and `Transcript`s from whisper.cpp (an early one at a pause, the final
one at the end of speech); "nothing heard" is a rejected transcript, never a turn.
Threads: PortAudio's callback thread delivers blocks (keep handlers short); whisper runs on the
thread the loop gives it (one at a time: pywhispercpp is not re-entrant). Imports only the catalog
and `app.system.sound_devices`.
"""
