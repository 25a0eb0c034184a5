"""The scheduler recipes of docs/ci.md, checked and run (issue 41): the
Kubernetes Indexed Job against Kubernetes' own schemas
(kubernetes-validate, strict), the AWS Batch job definition and
submission against the Batch API's model (botocore's validator), the
Cloud Run job's shape (Google publishes no schema of it); then each
recipe's own shard command run as the platform runs it — its variables
set, one process a task — and the merge of their reports compared with
the unsharded run's, byte for byte but durations. Offline.

    python recipes_check.py --bin DRYFIRE --work DIR
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import botocore.session
import botocore.validate
import kubernetes_validate
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CI = os.path.join(ROOT, "docs", "ci")
K8S_VERSION = "1.34.0"
DURATION = re.compile(rb'"duration_ms": ?-?[0-9][0-9.eE+-]*')
SUITE = """version: 1
agent: {provider: script}
cases:
  - from: rows.jsonl
    name: "case {{n}}"
    input: hi
    script: [{text: "hello {{n}}"}]
    expect: [{output: {contains: "hello"}}, {output: {contains: "7"}}]
"""

checks = {"passed": 0, "failed": 0}


def check(ok, what):
    checks["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + what, flush=True)


def run_tasks(args, work, name, script, variables):
    """Runs a recipe's shard script once a task, as its platform would:
    in the project (its /project), /reports a folder of its own, the
    platform's variables set; then merges the reports with the merge
    Job's command and compares the result with the unsharded run."""
    reports = os.path.join(work, "reports-" + name)
    shutil.rmtree(reports, ignore_errors=True)
    os.makedirs(reports)
    env = dict(os.environ, CI="true", PATH=os.path.dirname(args.bin) + os.pathsep + os.environ["PATH"])
    script = script.replace("/reports", reports).replace("cd /project", "cd " + work)
    for task, extra in enumerate(variables):
        p = subprocess.run(["sh", "-c", script], cwd=work, env=dict(env, **extra), capture_output=True)
        check(p.returncode == 0, f"{name}: task {task} ({' '.join(f'{k}={v}' for k, v in extra.items())}) runs its shard: {p.stderr.decode().strip().splitlines()[:1]}")
    merge = MERGE.replace("/reports", reports)
    p = subprocess.run(["sh", "-c", merge], cwd=work, env=env, capture_output=True)
    check(p.returncode in (0, 1), f"{name}: the merge Job's command merges the {len(variables)} reports ({p.stderr.decode().strip()[:200]})")
    with open(os.path.join(reports, "report.json"), "rb") as f:
        merged = DURATION.sub(b'"duration_ms": 0', f.read())
    check(merged == WHOLE, f"{name}: the merged report is the unsharded run's, byte for byte but durations")


def main():
    global MERGE, WHOLE
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    work = os.path.abspath(args.work)
    os.makedirs(os.path.join(work, "suites"), exist_ok=True)
    with open(os.path.join(work, "suites", "cases.dryfire.yaml"), "w") as f:
        f.write(SUITE)
    with open(os.path.join(work, "suites", "rows.jsonl"), "w") as f:
        f.writelines(json.dumps({"n": n}) + "\n" for n in range(1, 31))
    subprocess.run([args.bin, "run", "suites/", "--json", "whole.json"], cwd=work, capture_output=True, env=dict(os.environ, CI="true"))
    with open(os.path.join(work, "whole.json"), "rb") as f:
        WHOLE = DURATION.sub(b'"duration_ms": 0', f.read())

    # Kubernetes: both Jobs valid against the API's schemas, strictly.
    with open(os.path.join(CI, "k8s-indexed-job.yaml")) as f:
        shards, merge_job = list(yaml.safe_load_all(f))
    for doc in (shards, merge_job):
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
            check(True, f"k8s-indexed-job.yaml: Job {doc['metadata']['name']} is valid batch/v1 (Kubernetes {K8S_VERSION}, strict)")
        except kubernetes_validate.ValidationError as e:
            check(False, f"k8s-indexed-job.yaml: Job {doc['metadata']['name']}: {e}")
    spec = shards["spec"]
    script = spec["template"]["spec"]["containers"][0]["args"][0]
    n = spec["completions"]
    check(spec["completionMode"] == "Indexed" and f"--shard auto/{n}" in script, f"k8s: an Indexed Job of {n} completions runs --shard auto/{n}")
    MERGE = merge_job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    run_tasks(args, work, "kubernetes", script, [{"JOB_COMPLETION_INDEX": str(i)} for i in range(n)])

    # AWS Batch: the job definition and the array submission, against the
    # Batch API's own model.
    model = botocore.session.get_session().get_service_model("batch")
    with open(os.path.join(CI, "aws-batch-job-definition.json")) as f:
        jobdef = json.load(f)
    with open(os.path.join(CI, "aws-batch-submit.json")) as f:
        submit = json.load(f)
    for name, op, params in (("aws-batch-job-definition.json", "RegisterJobDefinition", jobdef), ("aws-batch-submit.json", "SubmitJob", submit)):
        report = botocore.validate.ParamValidator().validate(params, model.operation_model(op).input_shape)
        check(not report.has_errors(), f"{name}: valid {op} input of the Batch API ({report.generate_report() or 'no errors'})")
    size = submit["arrayProperties"]["size"]
    check(submit["jobDefinition"] == jobdef["jobDefinitionName"], "aws: the submission names the job definition")
    run_tasks(args, work, "aws-batch", jobdef["containerProperties"]["command"][2],
              [{"AWS_BATCH_JOB_ARRAY_INDEX": str(i), "AWS_BATCH_JOB_ARRAY_SIZE": str(size)} for i in range(size)])

    # Cloud Run Jobs: no published schema; its shape, then its tasks.
    with open(os.path.join(CI, "cloud-run-job.yaml")) as f:
        job = yaml.safe_load(f)
    tmpl = job["spec"]["template"]["spec"]
    container = tmpl["template"]["spec"]["containers"][0]
    check(job["apiVersion"] == "run.googleapis.com/v1" and job["kind"] == "Job" and isinstance(tmpl["taskCount"], int),
          "cloud-run-job.yaml: a run.googleapis.com/v1 Job with a taskCount")
    count = tmpl["taskCount"]
    run_tasks(args, work, "cloud-run", container["args"][0],
              [{"CLOUD_RUN_TASK_INDEX": str(i), "CLOUD_RUN_TASK_COUNT": str(count)} for i in range(count)])

    print(f"{checks['passed']} passed, {checks['failed']} failed", flush=True)
    sys.exit(1 if checks["failed"] else 0)


if __name__ == "__main__":
    main()
