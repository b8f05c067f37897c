"""Each participant's response rate and mean score per week, from an Interlude research export.

Asks the server for a fresh export of one study with a personal access token (console: study → Exports → Access tokens),
waits for it, downloads the zip and reads it with pandas. Writes two CSV files into --out:

  response_rates.csv  pseudonym, answered, expired, response_rate (answered / (answered + expired))
  weekly_scores.csv   pseudonym, instrument_key, score, week (Monday of the participant's local week), mean, n

Usage:
  python weekly_summary.py --url https://interlude.example.org --token ilpat_... --study <study id> --out results/
"""
import argparse
import io
import json
import os
import time
import urllib.request
import zipfile

import pandas as pd


def call(url, token, method="GET", path=""):
    request = urllib.request.Request(url + "/api/v1" + path, method=method, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def download_export(url, token, study, wait_seconds=300):
    export = json.loads(call(url, token, "POST", f"/studies/{study}/exports"))
    deadline = time.monotonic() + wait_seconds
    while export["status"] in ("queued", "running"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"export {export['id']} still {export['status']} at {export['progress']} %")
        time.sleep(1)
        export = json.loads(call(url, token, path=f"/exports/{export['id']}"))
    if export["status"] != "ready":
        raise RuntimeError(f"export {export['id']} {export['status']}: {export.get('error', '')}")
    return zipfile.ZipFile(io.BytesIO(call(url, token, path=f"/exports/{export['id']}/file")))


def response_rates(prompts):
    counted = prompts[prompts["status"].isin(["completed", "expired"])]
    table = pd.crosstab(counted["pseudonym"], counted["status"]).reindex(columns=["completed", "expired"], fill_value=0)
    table = table.rename(columns={"completed": "answered"})
    table["response_rate"] = table["answered"] / (table["answered"] + table["expired"])
    return table.reset_index()[["pseudonym", "answered", "expired", "response_rate"]]


def weekly_scores(scores):
    scores = scores.dropna(subset=["value"]).copy()
    # The local date, as the participant lived it; its week starts on Monday.
    local_day = pd.to_datetime(scores["submitted_local"].str.slice(0, 10))
    scores["week"] = (local_day - pd.to_timedelta(local_day.dt.weekday, unit="D")).dt.date
    grouped = scores.groupby(["pseudonym", "instrument_key", "score", "week"])["value"]
    return grouped.agg(mean="mean", n="count").reset_index()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", default=os.environ.get("INTERLUDE_TOKEN"))
    parser.add_argument("--study", required=True)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    package = download_export(args.url.rstrip("/"), args.token, args.study)
    prompts = pd.read_csv(package.open("prompts.csv"), dtype={"pseudonym": str})
    scores = pd.read_csv(package.open("scores.csv"), dtype={"pseudonym": str})
    os.makedirs(args.out, exist_ok=True)
    rates = response_rates(prompts)
    rates.to_csv(os.path.join(args.out, "response_rates.csv"), index=False)
    weekly_scores(scores).to_csv(os.path.join(args.out, "weekly_scores.csv"), index=False)
    print(rates.to_string(index=False))


if __name__ == "__main__":
    main()
