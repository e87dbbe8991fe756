"""Rows of the report for the live-conversation benchmarks: voice-to-voice latency and
turn-taking, how the voice ends, barge-in, a busy machine, idle CPU."""

from __future__ import annotations

from bench.common import pct
from bench.result_files import Row, ok


def idle_rows(r: dict) -> list[Row]:
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


def bargein_rows(r: dict) -> list[Row]:
    out = []
    voice = r["voice"]
    for mic, m in r["mics"].items():
        s = m["summary"]
        rate = s["detected"] / s["trials"]
        p50, p90 = s["to_silence_p50_ms"], s["to_silence_p90_ms"]
        fast = p50 is not None and p50 <= 300 and p90 <= 500
        out += [
            (
                "bargein",
                f"{mic} ({voice} voice): detected · question heard after it · speech start → "
                "silence p50 / p90",
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


def load_rows(r: dict) -> list[Row]:
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


def prosody_row(r: dict) -> Row:
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


def cpu_rows(family: str, cpu: dict | None) -> list[Row]:
    """CPU per hands-free turn by thread (bench/thread_cpu.py), the busiest first."""
    if not cpu:
        return []
    busy = sorted(((v["p50"], k) for k, v in cpu.items() if v["p50"] >= 10), reverse=True)
    return [
        (
            "latency",
            f"{family} voice: CPU per hands-free turn by thread, p50 (question's first sound → reply "
            "heard; a thread's native workers count as it)",
            " · ".join(f"{name} {ms} ms" for ms, name in busy),
            "reported",
        )
    ]


def latency_rows(lat: dict) -> list[Row]:
    """Voice-to-voice and turn-taking per voice family (bench/latency.py): today's rule against
    the earlier one, a remote brain, push-to-talk and the sequential baseline, in one run."""
    out: list[Row] = []
    for family, f in lat["families"].items():
        rules, seq = f["rules"], f["sequential_ms"]["heard"]
        today, earlier = rules["today"]["stages_ms"], rules["earlier"]["stages_ms"]["heard"]
        stages = " · ".join(f"{k} {v['p50']}" for k, v in today.items() if k != "heard")
        ptt = f["push_to_talk"]["release_to_heard_ms"]
        ratio, speedup, ptt_speedup = (
            f["today_over_earlier_p50"],
            f["speedup_vs_sequential_p50"],
            f["ptt_speedup_vs_sequential_p50"],
        )
        h = today["heard"]
        out += [
            (
                "latency",
                f"{family} voice: today's rule, stages p50 after the end of speech, {f['questions']} "
                "questions (ms)",
                stages,
                "",
            ),
            *cpu_rows(family, rules["today"].get("cpu_ms_per_turn")),
            (
                "latency",
                f"{family} voice: hands-free voice-to-voice p50 / p90, today's rule (the earlier words "
                "rule; sequential)",
                f"{h['p50']} / {h['p90']} ms ({earlier['p50']} / {earlier['p90']}; {seq['p50']} / "
                f"{seq['p90']}): {ratio}×",
                f"≤ 1.0× the earlier ({ok(ratio <= 1.0)})",
            ),
        ]
        out += paired_rows(family, rules["today"]["samples"], rules["earlier"]["samples"])
        out += remote_rows(family, f, lat.get("server", "llama_cpp.server"))
        out += [
            (
                "latency",
                f"{family} voice: push-to-talk release (200 ms after the last word) → first sample "
                "heard, p50 / p90",
                f"{ptt['p50']} / {ptt['p90']} ms",
                "",
            ),
            (
                "latency",
                f"{family} voice: speed-up to first audio vs sequential (talk-llama's order), "
                "hands-free · push-to-talk",
                f"{speedup}× · {ptt_speedup}×",
                f"≥ 2.5× ({ok(min(speedup, ptt_speedup) >= 2.5)})",
            ),
            *paused_rows(family, rules),
        ]
    return out


def paired_rows(family: str, today: list[dict], earlier: list[dict]) -> list[Row]:
    """Today's rule against the earlier one question by question (the same clips; paired by
    their index, or in order in results without it):
    where the two rules chose different end silences, and the ratio of the times heard on the
    others, where only the machine's noise differs."""
    if all("question" in s for s in today + earlier):  # a turn may be missing from either
        by_question = {e["question"]: e for e in earlier}
        pairs = [(t, by_question[t["question"]]) for t in today if t["question"] in by_question]
    elif len(today) == len(earlier):
        pairs = list(zip(today, earlier, strict=True))
    else:
        return []
    pairs = [(t, e) for t, e in pairs if t.get("t_heard_ms") and e.get("t_heard_ms")]
    if not pairs:
        return []
    differ = [(t, e) for t, e in pairs if t["end_silence_ms"] != e["end_silence_ms"]]
    alike = [(t, e) for t, e in pairs if t["end_silence_ms"] == e["end_silence_ms"]]
    same = [t["t_heard_ms"] / e["t_heard_ms"] for t, e in alike]
    shown = "; ".join(f'"{t["user"]}" {t["end_silence_ms"]} vs {e["end_silence_ms"]} ms' for t, e in differ)
    median = f"{pct(same, 50):.2f}×" if same else "-"
    return [
        (
            "latency",
            f"{family} voice: complete questions where today's rule waited another silence than the "
            "earlier one (today vs earlier) · median today/earlier heard on the others",
            f"{len(differ)}/{len(pairs)}{': ' + shown if shown else ''} · {median}",
            "reported",
        )
    ]


SERVERS = {
    "remote": "the words read by the local model, the sound where they are unsure (the default)",
    "remote_sound": "no words reader: the sound decides",
}


SERVER_NAMES = {"llama-server": "llama.cpp's llama-server", "llama_cpp.server": "llama-cpp-python's server"}


def remote_rows(family: str, f: dict, server: str) -> list[Row]:
    """A server as the brain against the local one, in the same run, with and without the local
    reader of the words (brain/words_reader.py). `server`: which one ran (tests/support/servers)."""
    out: list[Row] = []
    for name, how in SERVERS.items():
        if name not in f["rules"]:
            continue
        r, ratio = f["rules"][name]["stages_ms"]["heard"], f[f"{name}_over_local_p50"]
        target = f"≤ 1.1× ({ok(ratio <= 1.1)})" if name == "remote" else ""
        out.append(
            (
                "latency",
                f"{family} voice: hands-free voice-to-voice p50 / p90, a server as the brain "
                f"({SERVER_NAMES.get(server, server)}, same model; {how})",
                f"{r['p50']} / {r['p90']} ms: {ratio}× the local brain",
                target,
            )
        )
    return out


WAYS = {
    "through": "one sentence, the voice held up at the pause",
    "apart": "the first half said alone, ending like a finished sentence",
}


def paused_rows(family: str, rules: dict) -> list[Row]:
    """Turns ended at a mid-sentence pause (bench/latency.py `paused_wavs`), both ways of saying
    (and with a server as the brain, where measured)."""
    out = []
    for way, how in WAYS.items():
        if (server := rules.get("remote", {}).get("paused", {}).get(way)) is not None:
            out.append(
                (
                    "latency",
                    f"{family} voice: turns ended at a 500–800 ms mid-sentence pause ({how}), a "
                    "server as the brain, the words read locally",
                    f"{server['premature']}/{server['n']}",
                    f"≤ 10% ({ok(server['premature'] <= 0.1 * server['n'])})",
                )
            )
        pt, pe = rules["today"]["paused"][way], rules["earlier"]["paused"][way]
        out += [
            (
                "latency",
                f"{family} voice: turns ended at a 500–800 ms mid-sentence pause ({how}), today's "
                "rule (the earlier)",
                f"{pt['premature']}/{pt['n']} ({pe['premature']}/{pe['n']})",
                f"≤ 10% ({ok(pt['premature'] <= 0.1 * pt['n'])})",
            ),
            (
                "latency",
                f"{family} voice: … of which left as two turns (speech on within 1.5 s continues a "
                "turn); the assistant's voice had started",
                f"{pt['split']}/{pt['n']} ({pe['split']}/{pe['n']}); voice started in "
                f"{pt['voice_early']} ({pe['voice_early']})",
                "",
            ),
        ]
    return out


def turn_rules_rows(r: dict) -> list[Row]:
    """How each turn-end rule decides on the same clips (bench/turn_rules.py), per voice family:
    the default rule (a local brain, or a server with the local words reader), the same with the
    words' top at 0.2 (what the default 0.15 trades against) and a server's without the
    reader, against the rules without the turn model."""
    shown = (
        "words, earlier scale (no turn model)", "words (no turn model)", "both (default)",
        "both, the words finished from P 0.2", "audio",
    )  # fmt: skip
    servers = ("server: fixed (no turn model)", "server, no words reader: the sound + pitch")
    out: list[Row] = []
    for name in (*shown, *servers):
        for family, v in r["rules_at_20ms"][name].items():
            through, apart = v["through_early"], v["apart_early"]
            n = int(through.split("/")[1]) + int(apart.split("/")[1])
            early = (int(through.split("/")[0]) + int(apart.split("/")[0])) / n
            out.append(
                (
                    "turn_rules",
                    f"{name}, {family} voices: paused utterances ended early (through · apart); "
                    "complete questions' end silence p50 · mean",
                    f"{through} · {apart}; "
                    f"{v['complete_silence_p50_ms']} · {v['complete_silence_mean_ms']} ms",
                    f"≤ 10% early ({ok(early <= 0.1)})",
                )
            )
    per_call = f"{r['turn_model_ms_p50']} ms"
    out.append(("turn_rules", "turn model per call (Smart Turn v3.2, 1 thread)", per_call, ""))
    return out


def vad_rows(r: dict) -> list[Row]:
    """Speech detectors on the same audio (bench/vad.py): onsets and ends per background, false
    starts, CPU."""
    out: list[Row] = []
    for name, per_bg in r["onsets"].items():
        onsets = "; ".join(
            f"{bg}: {v['missed']} missed, {v['delay_ms_p50']}/{v['delay_ms_p90']} ms"
            + (f", {v['split']} split, end {v['end_ms_p50']}/{v['end_ms_p90']} ms" if "split" in v else "")
            for bg, v in per_bg.items()
        )
        false = r["false_starts_per_min"][name]
        noisy = ", ".join(f"{k} {v}" for k, v in false.items() if v) or "none"
        cpu = r["us_per_20ms"][name]
        out.append(
            (
                "vad",
                f"{name}: speech onsets missed, start delay p50/p90, split, end vs the speech's end p50/p90 "
                f"(12 questions × {len(r['voices'])} voices); false starts per minute of noise; µs per "
                "20 ms (quiet · noise)",
                f"{onsets}; false starts: {noisy}; {cpu['silence']} · {cpu['pink']} µs",
                "",
            )
        )
    return out
