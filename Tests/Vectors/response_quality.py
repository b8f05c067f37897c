"""Works out the response-quality indices of Tests/Vectors/response-quality.json on its own, with Python's standard
library only, from the definitions in docs/features/response-quality.md: the Swift code is tested against the
expected values this writes, never against its own.

    python3 Tests/Vectors/response_quality.py           checks that the file's expected values are this script's
    python3 Tests/Vectors/response_quality.py --write   writes them
"""
import json
import os
import statistics
import sys

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "response-quality.json")
FAST_SECONDS = 1.0
STANDARD = {"fastShare": 0.5, "minimumItems": 5, "irvBelow": 0.05}


def scale_answer(item, options, answer):
    """(value, share of the item's range or None) for a scale answer, None for any other."""
    kind = item["type"]
    if kind == "single" and isinstance(answer, str):
        codes = [option["code"] for option in options]
        if answer not in codes:
            return None
        scores = [option.get("score") for option in options]
        if all(score is not None for score in scores):
            value, low, high = scores[codes.index(answer)], min(scores), max(scores)
        else:
            value, low, high = codes.index(answer), 0, len(codes) - 1
        return value, ((value - low) / (high - low) if high > low else None)
    if kind in ("scale", "slider") and isinstance(answer, (int, float)) and not isinstance(answer, bool):
        low, high = item.get("min"), item.get("max")
        share = (answer - low) / (high - low) if low is not None and high is not None and high > low else None
        return answer, share
    return None


def longest_run(values):
    longest, run, previous = 0, 0, object()
    for value in values:
        run = run + 1 if value == previous else 1
        previous = value
        longest = max(longest, run)
    return longest


def quality(case):
    # An item offers its own options, else its section's shared scale.
    items = [(item, item.get("options") or section.get("options") or [])
             for section in case["definition"]["sections"] for item in section["items"]]
    answers, seconds_of = case["answers"], case.get("itemSeconds", {})
    thresholds = case.get("thresholds", STANDARD)
    answered = [(item, options) for item, options in items if item["type"] != "display" and item["id"] in answers]
    seconds = [seconds_of[item["id"]] for item, _ in answered
               if item["id"] in seconds_of and seconds_of[item["id"]] >= 0]
    scale = [pair for pair in (scale_answer(item, options, answers[item["id"]]) for item, options in answered)
             if pair is not None]
    values = [value for value, _ in scale]
    shares = [share for _, share in scale if share is not None]
    result = {
        "scaleItems": len(scale),
        "timedItems": len(seconds),
        "fastShare": sum(1 for second in seconds if second < FAST_SECONDS) / len(seconds) if seconds else None,
        "medianSeconds": statistics.median(seconds) if seconds else None,
        "longstring": longest_run(values),
        "sd": statistics.pstdev(values) if len(values) >= 2 else None,
        "irv": statistics.pstdev(shares) if len(shares) >= 2 else None,
        "modeShare": max(values.count(value) for value in values) / len(values) if values else None,
    }
    flags = []
    if len(seconds) >= thresholds["minimumItems"] and result["fastShare"] >= thresholds["fastShare"]:
        flags.append("fast")
    if len(scale) >= thresholds["minimumItems"]:
        if result["longstring"] == len(scale):
            flags.append("straightlined")
        if len(shares) >= thresholds["minimumItems"] and result["irv"] < thresholds["irvBelow"]:
            flags.append("low_variability")
    result["flags"] = flags
    return result


def main():
    with open(VECTORS, encoding="utf-8") as handle:
        vectors = json.load(handle)
    wrong = []
    for case in vectors["cases"]:
        expected = quality(case)
        if "--write" in sys.argv:
            case["expected"] = expected
        elif case.get("expected") != expected:
            wrong.append(f"{case['name']}: the file says {case.get('expected')}, worked out {expected}")
    if "--write" in sys.argv:
        with open(VECTORS, "w", encoding="utf-8") as handle:
            json.dump(vectors, handle, ensure_ascii=False, indent=1)
            handle.write("\n")
    elif wrong:
        print("\n".join(wrong), file=sys.stderr)
        sys.exit(1)
    else:
        print(f"response-quality.json: {len(vectors['cases'])} cases as worked out")


if __name__ == "__main__":
    main()
