"""The end-of-turn rules as objects chosen by config (loop/turn_end.py): what each asks for and
how the silence follows the signals. No audio, no models: the rules are pure."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.loop.turn_end import COMBINES, FixedSilence, FromSignals, Signals, TurnEndConfig, rule_for

probability = st.floats(1e-6, 1.0)
maybe_p = st.none() | probability


def test_the_config_chooses_the_rule() -> None:
    assert rule_for(TurnEndConfig(rule="fixed"), 400) == FixedSilence(400)
    c = TurnEndConfig(combine="either")
    assert rule_for(c, 400) == FromSignals(c, 400)


@given(p=maybe_p, sound=maybe_p, pitch=st.none() | st.floats(0.5, 2.0))
def test_the_fixed_rule_asks_nothing_and_always_waits_the_same(p, sound, pitch) -> None:
    rule = rule_for(TurnEndConfig(rule="fixed"), 400)
    assert not rule.wants_sound(p) and rule.undecided_ms() == 400
    assert rule.silence_ms(Signals(p, pitch, "What is it?", sound)) == 400


@given(combine=st.sampled_from(COMBINES), p=maybe_p, sound=maybe_p, pitch=st.none() | st.floats(0.5, 2.0))
def test_every_silence_lies_between_the_short_and_the_long_wait(combine, p, sound, pitch) -> None:
    c = TurnEndConfig(combine=combine)
    ms = rule_for(c, 400).silence_ms(Signals(p, pitch, "Tell me about", sound))
    assert c.short_ms <= ms <= c.long_ms or ms == 400  # 400: nothing known, the VAD's silence


@given(combine=st.sampled_from(("words", "both", "either", "mean")), a=probability, b=probability)
def test_words_more_finished_never_wait_longer(combine, a, b) -> None:
    rule = rule_for(TurnEndConfig(combine=combine), 400)
    lo, hi = sorted((a, b))
    assert rule.silence_ms(Signals(hi)) <= rule.silence_ms(Signals(lo))


@given(p=probability, sound=probability)
def test_both_waits_at_least_as_long_as_either_signal_alone(p, sound) -> None:
    both = rule_for(TurnEndConfig(combine="both"), 400)
    words = rule_for(TurnEndConfig(combine="words"), 400)
    assert both.silence_ms(Signals(p, sound_p=sound)) >= words.silence_ms(Signals(p))


def test_beside_the_words_the_sound_is_asked_only_for_unsure_words() -> None:
    c = TurnEndConfig()
    rule = rule_for(c, 400)
    assert not rule.wants_sound(c.trailing_at / 2)  # trailing off: the long wait whatever it sounds like
    assert rule.wants_sound((c.trailing_at + c.words_sure_at) / 2)
    assert not rule.wants_sound(c.words_sure_at)  # sure enough alone
    assert rule.wants_sound(None)  # no words read: the sound is all there is
    assert not rule_for(TurnEndConfig(combine="words"), 400).wants_sound(None)


def test_without_the_words_a_voice_held_high_waits_unless_it_sounds_like_a_finished_question() -> None:
    c = TurnEndConfig()
    rule = rule_for(c, 400)
    held = c.hold_at * 1.1
    assert rule.silence_ms(Signals(None, held, "Tell me about", 0.9)) == c.long_ms
    assert rule.silence_ms(Signals(None, held, "Is it far?", 0.9)) < c.long_ms
    assert rule.silence_ms(Signals(None, held, "Is it far?", 0.2)) == c.long_ms
