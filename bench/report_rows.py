"""Rows of the report, one group per result file in bench/results/ (bench.report writes them)."""

from __future__ import annotations

from app.voice.speaker import SpeakerConfig
from bench.report_brain import (
    actions_rows,
    families_rows,
    honest_actions_rows,
    longchat_rows,
    memory_rows,
    model_memory_rows,
)
from bench.report_remote import server_rows
from bench.report_turns import (
    bargein_rows,
    idle_rows,
    latency_rows,
    load_rows,
    prosody_row,
    turn_rules_rows,
    vad_rows,
)
from bench.result_files import Row, load, ok

DEFAULT_OUTPUT_LATENCY = SpeakerConfig.latency


def rows() -> list[Row]:
    out: list[Row] = []
    if c := load("context"):
        g, k, r, s = c["generation"], c["shift_cost"], c["rss"], c["session"]
        last = c["turns"]
        out += [
            (
                "context",
                f"engine prompt time, turn {last} / turn 2",
                f"{c['engine_last_over_turn2']}×",
                f"≤ 1.3 ({ok(c['engine_last_over_turn2'] <= 1.3)})",
            ),
            (
                "context",
                f"baseline (message list + truncation) / engine at turn {last}",
                f"{c['baseline_over_engine_last']}× ({c['baseline_prompt_tokens_last']} vs "
                f"{c['engine_prompt_tokens_last']} prompt tokens)",
                f"≥ 5× ({ok(c['baseline_over_engine_last'] >= 5)})",
            ),
            (
                "context",
                "total prompt-eval time over the run, engine vs baseline",
                f"{c['engine_total_prompt_s']} s vs {c['baseline_total_prompt_s']} s",
                "",
            ),
            (
                "context",
                "generation speed vs create_completion(stream=True)",
                f"{g['ratio']}× ({g['engine_tok_s']} vs {g['create_completion_tok_s']} tok/s)",
                f"≥ 0.95 ({ok(g['ratio'] >= 0.95)})",
            ),
            (
                "context",
                f"shift cost: next-token KL vs fresh evaluation ({k['shifts_measured']} shifts)",
                f"mean {k['kl_mean']} nats, max {k['kl_max']}; top-1 agreement {k['top1_agreement']}",
                "reported",
            ),
            (
                "context",
                f"session resume vs re-evaluation ({s['n_past']} tokens)",
                f"{s['resume_ms']} ms vs {s['replay_ms']} ms ({s['replay_over_resume']}×)",
                "reported",
            ),
            (
                "context",
                "RSS after 1000 short turns vs after 50",
                f"{r['growth_pct']:+}% ({r['rss_mb_50']} MB)",
                f"within 5% ({ok(abs(r['growth_pct']) <= 5)})",
            ),
        ]
    if t := load("stt"):
        for name, m in t["models"].items():
            a, f = m["auto"], m["full"]
            default = name == t["default_model"]
            tag = f"stt {name}" + (" (default)" if default else "")
            out += [
                (
                    tag,
                    f"RTF p50, automatic audio_ctx (mean {a['audio_ctx_mean']:.0f}) vs full window, "
                    f"{t['clips']} clips of {t['clip_s_mean']} s",
                    f"{a['rtf_p50']} vs {f['rtf_p50']} ({m['speedup_auto_vs_full']}× faster)",
                    f"≤ 0.15 ({ok(a['rtf_p50'] <= 0.15)})" if default else "reference",
                ),
                (
                    tag,
                    "WER, automatic vs full window (espeak-ng, 6 voices); vs f16 full window",
                    f"{a['wer_pct']}% vs {f['wer_pct']}% ({m['wer_delta_points']:+} points); "
                    f"{m['wer_vs_f16_full']['auto']:+} points",
                    f"≤ +1 point ({ok(m['wer_delta_points'] <= 1)})" if default else "reference",
                ),
            ]
        out.append(
            (
                "stt",
                "end-of-speech detection latency p50 / p90 (ours vs talk-llama's rule)",
                f"{t['eos_ms_ours']['p50']} / {t['eos_ms_ours']['p90']} ms vs "
                f"{t['eos_ms_talk_llama']['p50']} / {t['eos_ms_talk_llama']['p90']} ms",
                f"≤ 500 ms ({ok(t['eos_ms_ours']['p50'] <= 500)})",
            )
        )
    if s := load("tts"):
        out += tts_rows(s)
    if lat := load("latency"):
        out += latency_rows(lat)
    if r := load("pauses"):
        lost, ms = r["tail_lost"], r["whisper_ms_p50"]
        out.append(
            (
                "pauses",
                f"utterances with a 0.6–1.2 s pause mid-sentence whose last word whisper lost, given "
                f"them whole vs with the pause cut to 300 ms ({r['utterances']}); whisper p50",
                f"{lost['whole']} vs {lost['squeezed']}; {ms['whole']} vs {ms['squeezed']} ms",
                "",
            )
        )
    if r := load("prosody"):
        out.append(prosody_row(r))
    if r := load("turn_rules"):
        out += turn_rules_rows(r)
    if r := load("vad"):
        out += vad_rows(r)
    if r := load("longchat"):
        out += longchat_rows(r)
    if r := load("memory"):
        out += memory_rows(r)
    if r := load("model_memory"):
        out += model_memory_rows(r)
    if r := load("families"):
        out += families_rows(r)
    if r := load("actions"):
        out += actions_rows(r)
    if r := load("honest_actions"):
        out += honest_actions_rows(r)
    if r := load("idle"):
        out += idle_rows(r)
    if r := load("bargein"):
        out += bargein_rows(r)
    out += server_rows()
    if r := load("load"):
        out += load_rows(r)
    if r := load("chatview"):
        out.append(
            (
                "chatview",
                f"{r['messages']} messages (bubbles): open · redraw while a reply streams, p50 "
                "(whole view redrawn)",
                f"{r['open_ms_p50']} · {r['redraw_ms_p50']} ms ({r['full_redraw_ms_p50']} ms; "
                f"{r['redraw_speedup']}× faster)",
                "reported",
            )
        )
    if r := load("switch"):
        out.append(
            (
                "switch",
                f"open a conversation with a full {r['n_ctx']}-token context: state restored vs "
                "re-evaluated, p50 of 5",
                f"{r['switch_ms_p50']} vs {r['reevaluate_ms_p50']} ms ({r['speedup']}×; "
                f"state file {r['state_mb']} MB)",
                "reported",
            )
        )
    if r := load("orb"):
        met = "met" if min(r["quiet_fps"], r["busy_fps"]) >= 30 else "**missed**"
        out.append(
            (
                "orb",
                "voice orb while speaking: frames a second · GUI-thread CPU per frame, quiet / one core busy",
                f"{r['quiet_fps']} · {r['quiet_gui_ms_per_frame']} ms / {r['busy_fps']} · "
                f"{r['busy_gui_ms_per_frame']} ms (idle: {r['quiet_idle_fps']:.0f} frames)",
                f"≥ 30 fps ({met})",
            )
        )
    if r := load("voice_latency"):
        v = r["voices"]
        out.append(
            (
                "voice_latency",
                f"hands-free voice-to-voice p50 / p90, natural vs system voice ({r['questions']} questions × "
                f"{r['rounds']} rounds, alternating)",
                f"{v['natural']['heard_p50_ms']} / {v['natural']['heard_p90_ms']} ms vs "
                f"{v['system']['heard_p50_ms']} / {v['system']['heard_p90_ms']} ms "
                f"({r['natural_over_system_p50']}×)",
                f"≤ 1.15× ({ok(r['natural_over_system_p50'] <= 1.15)})",
            )
        )
    if r := load("fragments"):
        out += fragments_rows(r)
    if r := load("languages"):
        out += language_rows(r)
    for name in ("underruns", "underruns_app"):
        if r := load(name):
            out += underrun_rows(r)
    for name in ("coldstart", "coldstart-cold"):
        if r := load(name):
            out += coldstart_rows(r)
    return out


def fragments_rows(r: dict) -> list[Row]:
    voices = ", ".join(r["voices"])
    return [
        (
            "fragments",
            f"slices of questions shorter than a word (60-180 ms) that became turns ({voices})",
            f"{r['subword_turns']} of {r['subword_pieces']}",
            f"0 ({ok(r['subword_turns'] == 0)})",
        ),
        (
            "fragments",
            "cut pieces of questions that became one of whisper's stock phrases (loops cut to one saying)",
            f"{r['stock_phrase_turns']} of {r['cut_pieces']} "
            f"(whisper wrote one {r['whisper_stock_phrases']} times)",
            f"0 ({ok(r['stock_phrase_turns'] == 0)})",
        ),
        (
            "fragments",
            "short real answers heard as turns (Okay, Thanks, Five, Yes, No …)",
            f"{r['answers_heard']} of {r['answers']}",
            f"all ({ok(r['answers_heard'] == r['answers'])})",
        ),
    ]


def language_rows(r: dict) -> list[Row]:
    """One row per model and language/voice: error rate and whisper time; Automatic's detection
    and cost where the model is multilingual."""
    out: list[Row] = []
    for model, by_language in r["models"].items():
        for key, m in by_language.items():
            unit = "CER" if m["unit"] == "characters" else "WER"
            result = f"{unit} {m['error_rate']:.0%} · {m['fixed_p50_ms']} ms"
            target = "reported"
            if "found_early" in m:
                result += (
                    f" · Automatic, found while speaking: {m['found_early']}, "
                    f"{m['early_over_fixed_p50']}× the time after speech; in the whole utterance: "
                    f"{m['detected']}, {m['auto_over_fixed_p50']}×"
                )
                target = f"Automatic ≤ 1.3× ({ok(m['early_over_fixed_p50'] <= 1.3)})"
            out.append(
                ("languages", f"{model}, {key}: error rate · whisper p50, language set", result, target)
            )
    return out


def underrun_rows(r: dict) -> list[Row]:
    """One row per (busy cores, output buffer): device underflows and holes heard, stop time."""
    out: list[Row] = []
    for run in r["runs"]:
        lat = run["latency"] if isinstance(run["latency"], str) else f"{run['latency'] * 1000:.0f} ms"
        busy = run["busy_cores"]
        load_ = "the app's own work in-process and " if run.get("load") == "app" else ""
        default = run["latency"] == DEFAULT_OUTPUT_LATENCY
        target = (
            f"0 underflows, 0 holes ({ok(run['underflows'] == 0 and run['holes'] == 0)})"
            if busy == 1 and default
            else "reported"
        )
        out.append(
            (
                "underruns",
                f"{run['replies']} replies, output buffer {lat}{' (default)' if default else ''}, "
                f"{load_}{busy} other core(s) busy: underflows · holes heard · stop → silence p50 / max",
                f"{run['underflows']} · {run['holes']} · {run['stop_ms_p50']} / {run['stop_ms_max']} ms",
                target,
            )
        )
    return out


def coldstart_rows(r: dict) -> list[Row]:
    cache = "page cache dropped before each start" if r["cold"] else "files in the page cache"
    return [
        (
            "coldstart",
            f"bundle vs venv (`make run`): process start → window shown, p50 of {r['runs']}, {cache}",
            f"{r['bundle_shown_p50_ms']:.0f} vs {r['venv_shown_p50_ms']:.0f} ms "
            f"({r['shown_ratio_bundle_vs_venv']}×)",
            "reported",
        ),
        (
            "coldstart",
            f"bundle vs venv: process start → both models loaded, p50 of {r['runs']}, {cache}",
            f"{r['bundle_loaded_p50_ms']:.0f} vs {r['venv_loaded_p50_ms']:.0f} ms "
            f"({r['loaded_ratio_bundle_vs_venv']}×)",
            "reported",
        ),
    ]


def tts_rows(s: dict) -> list[Row]:
    """One group per engine: the device (first audio, gap, stop) and the ear (whisper base WER)."""
    p = s["pyttsx3"]
    out: list[Row] = []
    for name, o in s["engines"].items():
        tag = f"tts {name}"
        out += [
            (
                tag,
                "10-word sentence → first audio on the device, p50 / p90",
                f"{o['first_audio_ms_p50']} / {o['first_audio_ms_p90']} ms (pyttsx3 say+runAndWait: "
                f"{p['first_audio_ms_p50']} ms)",
                # A neural voice cannot start a sentence before it is synthesized whole: for it
                # the target is voice-to-voice against the system voice (voice_latency).
                f"≤ 150 ms ({ok(o['first_audio_ms_p50'] <= 150)})" if name == "system" else "reported",
            ),
            (
                tag,
                "gap between queued sentences (beyond their own pauses), p50 / max",
                f"{o['gap_ms_p50']} / {o['gap_ms_max']} ms",
                f"≤ 150 ms ({ok(o['gap_ms_max'] <= 150)})",
            ),
            (
                tag,
                "stop() → silence on the device, p50 / max",
                f"{o['stop_ms_p50']} / {o['stop_ms_max']} ms (pyttsx3: {p['stop']})",
                f"≤ 100 ms ({ok(o['stop_ms_max'] <= 100)})",
            ),
            (
                tag,
                f"whisper base WER on its speech ({o['sentences']} sentences: numbers, names, dates, "
                "questions, URLs)",
                f"{o['wer_pct']}%",
                "reported",
            ),
            (
                tag,
                "first clause synthesized, p50 / p90; real-time factor p50",
                f"{o['first_clause_ms_p50']} / {o['first_clause_ms_p90']} ms; {o['rtf_p50']}",
                "reported",
            ),
        ]
    return out
