"""Rows of the report for the brain's long-conversation benches: bench.longchat (replies that
stay varied and on topic over many shifts, recall by next-token choice) and bench.memory (facts
recalled in the sampled replies, memory note on vs off)."""

from __future__ import annotations

from bench.result_files import Row, ok


def longchat_rows(r: dict) -> list[Row]:
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


def memory_rows(r: dict) -> list[Row]:
    """Recall in sampled replies after ≥ 100 turns, memory note on vs off (same run)."""
    out = []
    seeds = len(r["seeds"])
    for n_ctx, by in r["by_ctx"].items():
        on, off = by["on"], by["off"]
        name_ok = on["name"] == f"{seeds}/{seeds}" and on["repeat"] == f"{seeds}/{seeds}"
        out += [
            (
                "memory",
                f"facts recalled in sampled replies after {r['turns']} turns, n_ctx {n_ctx}, "
                f"{seeds} seeds, note on (off); shifts {on['shifts']}",
                f"{on['facts']} ({off['facts']}); missed: {', '.join(on['missed']) or 'none'}",
                f"≥ 0.8 ({ok(on['facts'] >= 0.8)})",
            ),
            (
                "memory",
                f"persona's name · repeated word, n_ctx {n_ctx}, note on (off)",
                f"{on['name']} · {on['repeat']} ({off['name']} · {off['repeat']})",
                f"all ({ok(name_ok)})",
            ),
            (
                "memory",
                f"time per turn, note on vs off, n_ctx {n_ctx}",
                f"{by['time_ratio']}× ({on['per_turn_ms']} vs {off['per_turn_ms']} ms; "
                f"first token {on['first_token_ms']} vs {off['first_token_ms']} ms, "
                f"{on['gen_tokens']} vs {off['gen_tokens']} tokens; in lockstep)",
                f"≤ 1.05× ({ok(by['time_ratio'] <= 1.05)})",
            ),
            (
                "memory",
                f"template share max · on-topic min, turns 21+, n_ctx {n_ctx}, note on (off)",
                f"{on['template_share_max']} · {on['on_topic_min']} "
                f"({off['template_share_max']} · {off['on_topic_min']})",
                "as off",
            ),
        ]
    return out


def model_memory_rows(r: dict) -> list[Row]:
    """bench.model_memory: per model, the memory note on (off), on the bench's and held-out facts."""
    out = []
    for model, by_set in r["models"].items():
        for set_name, by in by_set.items():
            on, off = by["on"], by["off"]
            ratio = round(on["on_topic"] / off["on_topic"], 2) if off["on_topic"] else None
            out += [
                (
                    "model_memory",
                    f"{model}, {set_name} facts: on-topic after the first shift, note on (off), "
                    f"{len(r['seeds'])} seeds × {r['numbers']} questions, n_ctx {r['n_ctx']}",
                    f"{on['on_topic']} ({off['on_topic']}): {ratio}×",
                    f"≥ 0.95× ({ok(ratio is not None and ratio >= 0.95)})",
                ),
                (
                    "model_memory",
                    f"{model}, {set_name} facts: replies speaking the note's words, note on (off)",
                    f"{on['note_spoken']} ({off['note_spoken']})",
                    f"0 ({ok(on['note_spoken'] == 0)})",
                ),
                (
                    "model_memory",
                    f"{model}, {set_name} facts: recalled after the talk, note on (off)",
                    f"{on['recall']} ({off['recall']}); missed: {', '.join(on['missed']) or 'none'}",
                    f"≥ 0.8 ({ok(on['recall'] >= 0.8)})",
                ),
            ]
    return out


def families_rows(r: dict) -> list[Row]:
    """bench.families: a turn's cost on each family's memory (tiny models, the same run)."""
    out = []
    for family, f in r["families"].items():
        shifted = f"{f['shift_turn_ms']} ms ({f['shift_ratio']}×, {f['shifts']} shifts)"
        shift = shifted if f["shifts"] else "none"
        out.append(
            (
                "families",
                f"{family}: turn · turn with a shift · Retry (vs llama's)",
                f"{f['turn_ms']} ms · {shift} · {f['retry_ms']} ms ({f['retry_vs_llama']}×)",
                "the talk goes on",
            )
        )
    return out


def actions_rows(r: dict) -> list[Row]:
    """bench.actions: spoken requests heard answered by an action vs by the model (same run)."""
    out = []
    for m in r["models"].values():
        out.append(
            (
                "actions",
                f"{m['model']}: a spoken request answered by an action vs by the model, heard after "
                f"the end of speech, p50 (p90); answered by an action",
                f"{m['action_heard_p50_ms']} ({m['action_heard_p90_ms']}) vs {m['model_heard_p50_ms']} "
                f"({m['model_heard_p90_ms']}) ms: {m['ratio_p50']}×; {m['answered_by_action']}",
                f"≤ 1.0× ({ok(m['ratio_p50'] <= 1.0)})",
            )
        )
    return out


def honest_actions_rows(r: dict) -> list[Row]:
    """bench.honest_actions: replies claiming an action not taken, with the app's actions and
    without them (the model answers every request), per brain; and on the held-out requests."""
    out = []
    for name, b in r["brains"].items():
        on, off = b["actions"], b["model_only"]
        held_on, held_off = b["actions_held_out"], b["model_only_held_out"]
        out.append(
            (
                "honest_actions",
                f"{name}: replies claiming an action not taken, with actions · model only, of "
                f"{r['requests']} requests (answered by an action) / {r['held_out']} held out",
                f"{on['false_claims']} · {off['false_claims']} ({on['by_action']}) / "
                f"{held_on['false_claims']} · {held_off['false_claims']} ({held_on['by_action']})",
                f"0 ({ok(on['false_claims'] + held_on['false_claims'] == 0)})",
            )
        )
    return out
