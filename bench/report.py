"""Print the README's benchmark table from bench/results/*.json (run the benchmarks first).

Run: .venv/bin/python -m bench.report
"""

from __future__ import annotations

import json

from bench.common import ROOT

RESULTS = ROOT / "bench" / "results"


def load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def ok(flag: bool) -> str:
    return "met" if flag else "**missed**"


def rows() -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
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
        o, p = s["ours"], s["pyttsx3"]
        out += [
            (
                "tts",
                "10-word sentence → first audio on the device, p50 / p90",
                f"{o['first_audio_ms_p50']} / {o['first_audio_ms_p90']} ms (pyttsx3 say+runAndWait: "
                f"{p['first_audio_ms_p50']} ms)",
                f"≤ 150 ms ({ok(o['first_audio_ms_p50'] <= 150)})",
            ),
            (
                "tts",
                "gap between queued sentences (beyond their own pauses), p50 / max",
                f"{o['gap_ms_p50']} / {o['gap_ms_max']} ms",
                f"≤ 150 ms ({ok(o['gap_ms_max'] <= 150)})",
            ),
            (
                "tts",
                "stop() → silence on the device, p50 / max",
                f"{o['stop_ms_p50']} / {o['stop_ms_max']} ms (pyttsx3: {p['stop']})",
                f"≤ 100 ms ({ok(o['stop_ms_max'] <= 100)})",
            ),
        ]
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
    if r := load("longchat"):
        out += longchat_rows(r)
    if r := load("idle"):
        out += idle_rows(r)
    if r := load("bargein"):
        out += bargein_rows(r)
    if r := load("remote"):
        out += remote_rows(r)
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
    for name in ("coldstart", "coldstart-cold"):
        if r := load(name):
            out += coldstart_rows(r)
    return out


def coldstart_rows(r: dict) -> list[tuple[str, str, str, str]]:
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


def longchat_rows(r: dict) -> list[tuple[str, str, str, str]]:
    """Default sampler vs the fresh baseline (same sampler, same seed) and vs `today`."""
    configs = r["configs"]
    if "default" not in configs:
        return []
    runs, today = configs["default"]["runs"], configs.get("today", {}).get("runs")  # today: optional
    fresh = runs["fresh"]
    seeds = sorted(fresh)
    out = []
    for mode in [m for m in runs if m != "fresh"]:
        n = mode.removeprefix("ctx")
        per = [(runs[mode][s], fresh[s]) for s in seeds]
        share = [a["template_share"] for a, _ in per]
        fresh_share = [f["template_share"] for _, f in per]
        met = all(a["template_share"] <= min(0.20, 2 * f["template_share"]) for a, f in per)
        ratio = [round(a["on_topic"] / f["on_topic"], 2) for a, f in per]
        today_share = [today[mode][s]["template_share"] for s in seeds] if today else []
        out += [
            (
                "longchat",
                f"template share, turns 21+, n_ctx {n}, seeds {', '.join(seeds)}",
                f"{share} (fresh {fresh_share}; before: {today_share})",
                f"≤ 2× fresh and ≤ 0.20, every seed ({ok(met)})",
            ),
            (
                "longchat",
                f"on-topic vs fresh, n_ctx {n}",
                f"{ratio}× ({[a['on_topic'] for a, _ in per]} vs {[f['on_topic'] for _, f in per]})",
                f"≥ 0.9×, every seed ({ok(min(ratio) >= 0.9)})",
            ),
        ]
        costs = [runs[mode][s].get("sampler_ms_per_token") for s in seeds]
        if all(costs):
            before = sum(c["today"] for c in costs) / len(costs)
            after = sum(c["this"] for c in costs) / len(costs)
            ms_token = sum(1000 / runs[mode][s]["tokens_per_s"] for s in seeds) / len(seeds)
            ratio = (ms_token - after + before) / ms_token  # old ms / new ms: eval time is shared
            out.append(
                (
                    "longchat",
                    f"generation speed vs before: sampler cost per token on the final context, n_ctx {n}",
                    f"{ratio:.3f}× ({after:.2f} vs {before:.2f} ms of {ms_token:.1f} ms per token)",
                    f"≥ 0.95 ({ok(ratio >= 0.95)})",
                )
            )
        passed = sum(all(runs[mode][s]["recall"].values()) for s in seeds)
        checks = ", ".join(runs[mode][seeds[0]]["recall"])
        out.append(
            (
                "longchat",
                f"recall after the conversation ({checks}), n_ctx {n}",
                f"{passed}/{len(seeds)} seeds",
                f"all ({ok(passed == len(seeds))})",
            )
        )
    return out


def idle_rows(r: dict) -> list[tuple[str, str, str, str]]:
    targets = {"window": 2.0, "window-minimized": 1.0, "chat": 3.0}
    return [
        (
            "idle",
            f"CPU (% of one core) and RSS doing nothing, {mode}, {r['seconds']:.0f} s",
            f"{m['cpu_percent']}% · {m['rss_mb']} MB",
            f"≤ {targets[mode]}% ({ok(m['cpu_percent'] <= targets[mode])})" if mode in targets else "",
        )
        for mode, m in r["modes"].items()
    ]


def bargein_rows(r: dict) -> list[tuple[str, str, str, str]]:
    out = []
    for mic, m in r["mics"].items():
        s = m["summary"]
        rate = s["detected"] / s["trials"]
        p50, p90 = s["to_silence_p50_ms"], s["to_silence_p90_ms"]
        fast = p50 is not None and p50 <= 300 and p90 <= 500
        out += [
            (
                "bargein",
                f"{mic}: detected · question heard after it · speech start → silence p50 / p90",
                f"{s['detected']}/{s['trials']} · {s['heard']}/{s['trials']} · {p50} / {p90} ms",
                f"≥ 95%, ≤ 300 / 500 ms ({ok(rate >= 0.95 and fast)})",
            ),
            (
                "bargein",
                f"{mic}: false barge-ins · false turns over {s['replies']} whole replies",
                f"{s['false_barges']} · {s['false_turns']}",
                f"0 ({ok(s['false_barges'] == 0)})",
            ),
        ]
    return out


def load_rows(r: dict) -> list[tuple[str, str, str, str]]:
    s = r["summary"]
    out = [
        (
            "load",
            f"{condition}: generation tok/s, auto · fixed 1 · fixed 2 threads",
            " · ".join(str(s[condition][k]["tok_s"]) for k in ("auto", "fixed-1", "fixed-2")),
            "",
        )
        for condition in ("quiet", "busy")
    ]
    out += [
        (
            "load",
            "one core busy: auto / best fixed",
            f"{r['busy_auto_over_best_fixed']}×",
            f"≥ 0.9 ({ok(r['busy_auto_over_best_fixed'] >= 0.9)})",
        ),
        (
            "load",
            "quiet: auto / fixed 2 (the old default)",
            f"{r['quiet_auto_over_fixed2']}×",
            f"≥ 0.97 ({ok(r['quiet_auto_over_fixed2'] >= 0.97)})",
        ),
    ]
    if "heard_p50_busy_over_quiet" in r:
        out.append(
            (
                "load",
                "voice-to-voice p50, one core busy / quiet",
                f"{r['heard_p50_busy_over_quiet']}× "
                f"({r['heard_p50_busy_ms']} vs {r['heard_p50_quiet_ms']} ms)",
                f"≤ 1.5 ({ok(r['heard_p50_busy_over_quiet'] <= 1.5)})",
            )
        )
    return out


def remote_rows(r: dict) -> list[tuple[str, str, str, str]]:
    p = r["policies"]
    out = [
        (
            "remote",
            f"{name}: answered · tokens sent / evaluated by the server per turn · first token p50 / p90",
            f"{m['answered']}/{r['turns']} · {m['sent_mean']} / {m['evaluated_mean']} · "
            f"{m['ttft_p50_ms']} / {m['ttft_p90_ms']} ms",
            "",
        )
        for name, m in p.items()
    ]
    out.append(
        (
            "remote",
            "one-message sliding window / ours: server evaluation · first token p50",
            f"{r['evaluated_sliding_over_ours']}× · {r['ttft_p50_sliding_over_ours']}×",
            f"ours answers every turn ({ok(p['ours']['answered'] == r['turns'])})",
        )
    )
    return out


def prosody_row(r: dict) -> tuple[str, str, str, str]:
    v = r["voices"]

    def total(group: str) -> str:
        held = sum(x[group]["held"] for x in v.values())
        n = sum(x[group]["n"] for x in v.values())
        lo, hi = min(x[group]["min"] for x in v.values()), max(x[group]["max"] for x in v.values())
        return f"{held}/{n} ({lo}–{hi}×)"

    return (
        "prosody",
        f"voice at a pause ≥ {r['hold_at']}× where statements end, {len(v)} espeak-ng voices: "
        "mid-sentence pause; head said alone; held-out statements",
        f"{total('through')}; {total('apart')}; {total('statements')}",
        "all; none; none",
    )


def latency_rows(lat: dict) -> list[tuple[str, str, str, str]]:
    rules, seq, ptt = lat["rules"], lat["sequential_ms"]["heard"], lat["push_to_talk"]["release_to_heard_ms"]
    runs = lat.get("runs", [])

    def spread(key: str) -> str:
        values = [r[key] for r in runs]
        return f" (runs: {min(values)}–{max(values)})" if len(values) > 1 else ""

    out = []
    for rule in ("fixed", "words"):
        st = rules[rule]["stages_ms"]
        stages = " · ".join(f"{k} {v['p50']}" for k, v in st.items() if k != "heard")
        out.append(
            (
                "latency",
                f"{rule} rule: stages p50 after the end of speech, {lat['questions']} questions (ms)",
                stages,
                "",
            )
        )
    words, fixed = rules["words"]["stages_ms"]["heard"], rules["fixed"]["stages_ms"]["heard"]
    out += [
        (
            "latency",
            "hands-free voice-to-voice p50 / p90, words rule (fixed rule; sequential)",
            f"{words['p50']} / {words['p90']} ms{spread('heard_p50_words')} "
            f"({fixed['p50']} / {fixed['p90']}{spread('heard_p50_fixed')}; {seq['p50']} / {seq['p90']})",
            f"≤ 400 ms ({ok(words['p50'] <= 400)})",
        ),
        (
            "latency",
            "push-to-talk release (200 ms after the last word) → first sample heard, p50 / p90",
            f"{ptt['p50']} / {ptt['p90']} ms{spread('ptt_p50')}",
            f"≤ 350 ms ({ok(ptt['p50'] <= 350)})",
        ),
        (
            "latency",
            "speed-up to first audio vs sequential (talk-llama's order)",
            f"{lat['speedup_vs_sequential_p50']}×",
            f"≥ 2× ({ok(lat['speedup_vs_sequential_p50'] >= 2)})",
        ),
    ]
    return out + paused_rows(rules, spread)


WAYS = {
    "through": "one sentence, the voice held up at the pause",
    "apart": "the first half spoken alone, ending like a finished sentence",
}


def paused_rows(rules: dict, spread) -> list[tuple[str, str, str, str]]:
    """Turns ended at a mid-sentence pause (bench/latency.py `paused_wavs`), both ways of saying."""
    out = []
    for way, how in WAYS.items():
        pw, pf = rules["words"]["paused"][way], rules["fixed"]["paused"][way]
        out += [
            (
                "latency",
                f"turns ended at a 500–800 ms mid-sentence pause ({how}), words rule (fixed rule)",
                f"{pw['premature']}/{pw['n']}{spread(f'premature_words_{way}')} "
                f"({pf['premature']}/{pf['n']})",
                f"≤ 10% ({ok(pw['premature'] <= 0.1 * pw['n'])})",
            ),
            (
                "latency",
                "… of which left as two turns (speech on within 1.5 s continues a turn), words rule "
                "(fixed rule); the assistant's voice had started",
                f"{pw['split']}/{pw['n']} ({pf['split']}/{pf['n']}); voice started in "
                f"{pw['voice_early']} ({pf['voice_early']})",
                "",
            ),
        ]
    return out


def main() -> None:
    print("| bench | measure | result | target |")
    print("|---|---|---|---|")
    for r in rows():
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
