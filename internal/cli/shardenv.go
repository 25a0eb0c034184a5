package cli

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/report"
)

// ciShard is where one CI keeps a parallel job's index and the number of
// jobs.
type ciShard struct {
	name, index, total string
	base               int    // the index of the first job: 0 or 1
	noTotal            string // when the CI does not give the total: where it is
	// fallback is read for the total when the CI's own variable is not
	// set (an AWS Batch array job's size, which older agents do not set).
	fallback string
}

// ciShards are the CIs shardFromEnv reads, the first found used.
// DRYFIRE_SHARD_INDEX (1-based, like --shard I/N) comes first: set from a
// GitHub Actions matrix, or anywhere, it overrides what the CI says.
var ciShards = []ciShard{
	{name: "DRYFIRE_SHARD_INDEX", index: "DRYFIRE_SHARD_INDEX", total: "DRYFIRE_SHARD_TOTAL", base: 1},
	{name: "GitLab CI", index: "CI_NODE_INDEX", total: "CI_NODE_TOTAL", base: 1},
	{name: "CircleCI", index: "CIRCLE_NODE_INDEX", total: "CIRCLE_NODE_TOTAL", base: 0},
	{name: "Buildkite", index: "BUILDKITE_PARALLEL_JOB", total: "BUILDKITE_PARALLEL_JOB_COUNT", base: 0},
	{name: "Cloud Run Jobs", index: "CLOUD_RUN_TASK_INDEX", total: "CLOUD_RUN_TASK_COUNT", base: 0},
	{name: "an AWS Batch array job", index: "AWS_BATCH_JOB_ARRAY_INDEX", total: "AWS_BATCH_JOB_ARRAY_SIZE", base: 0, fallback: "DRYFIRE_SHARD_TOTAL",
		noTotal: "AWS_BATCH_JOB_ARRAY_SIZE (the array's size) is not set"},
	{name: "a Kubernetes Indexed Job", index: "JOB_COMPLETION_INDEX", total: "DRYFIRE_SHARD_TOTAL", base: 0,
		noTotal: "its total is the Job's spec.completions, which Kubernetes does not put in the environment"},
}

// shardFromEnv finds this machine's part of a sharded run in the CI's
// own variables: DRYFIRE_SHARD_INDEX (1-based) and DRYFIRE_SHARD_TOTAL,
// GitLab's CI_NODE_INDEX (1-based) and CI_NODE_TOTAL, CircleCI's
// CIRCLE_NODE_INDEX (0-based) and CIRCLE_NODE_TOTAL, Buildkite's
// BUILDKITE_PARALLEL_JOB (0-based) and BUILDKITE_PARALLEL_JOB_COUNT,
// Cloud Run Jobs' CLOUD_RUN_TASK_INDEX (0-based) and CLOUD_RUN_TASK_COUNT,
// an AWS Batch array job's AWS_BATCH_JOB_ARRAY_INDEX (0-based) with
// AWS_BATCH_JOB_ARRAY_SIZE (else DRYFIRE_SHARD_TOTAL or the total given),
// a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based) with the
// total given. total, when above 0, is the number of shards given on the
// command line (--shard auto/N): the total of a CI that does not say it,
// and a check of one that does. It returns the shard (Index 1-based, as
// everywhere in dryfire) and says where it came from, e.g.
// `GitLab CI: CI_NODE_INDEX=2, CI_NODE_TOTAL=3`. A missing, non-numeric
// or out-of-range value is an error that names the variable and value.
func shardFromEnv(getenv func(string) string, total int) (*dryfire.Shard, string, error) {
	for _, c := range ciShards {
		iv, tv, tname := getenv(c.index), getenv(c.total), c.total
		if tv == "" && c.fallback != "" {
			tv, tname = getenv(c.fallback), c.fallback
		}
		if iv == "" {
			// GitLab sets CI_NODE_TOTAL=1 on a job without parallel:.
			if c.name == "GitLab CI" && tv == "1" && total <= 1 {
				return &dryfire.Shard{Index: 1, Count: 1}, "GitLab CI: CI_NODE_TOTAL=1 and no CI_NODE_INDEX (a job without parallel:)", nil
			}
			continue
		}
		index, err := envNumber(c.index, iv)
		if err != nil {
			return nil, "", err
		}
		var count int
		from := fmt.Sprintf("%s=%s", c.index, iv)
		switch {
		case tv != "":
			if count, err = envNumber(tname, tv); err != nil {
				return nil, "", err
			}
			if count < 1 {
				return nil, "", fmt.Errorf("%s=%q: the number of shards is at least 1", tname, tv)
			}
			if total > 0 && total != count {
				return nil, "", fmt.Errorf("%s=%s says %d shards, not %d", tname, tv, count, total)
			}
			from += fmt.Sprintf(", %s=%s", tname, tv)
		case total > 0:
			count = total
			from += fmt.Sprintf(", --shard auto/%d", total)
		case c.noTotal != "":
			return nil, "", fmt.Errorf("%s=%s is the index of %s, but %s: give it as --shard auto/N or set %s", c.index, iv, c.name, c.noTotal, cmp.Or(c.fallback, c.total))
		default:
			return nil, "", fmt.Errorf("%s=%s is set but %s is not: set it to the number of shards, or give --shard auto/N", c.index, iv, c.total)
		}
		if count > report.MaxShards {
			return nil, "", fmt.Errorf("%s: at most %d shards, got %d", from, report.MaxShards, count)
		}
		if index < c.base || index > count-1+c.base {
			return nil, "", fmt.Errorf("%s=%s is out of range: %s numbers its %d shards %d to %d", c.index, iv, c.name, count, c.base, count-1+c.base)
		}
		if c.name == c.index {
			return &dryfire.Shard{Index: index - c.base + 1, Count: count}, from, nil
		}
		return &dryfire.Shard{Index: index - c.base + 1, Count: count}, c.name + ": " + from, nil
	}
	if tv := getenv("DRYFIRE_SHARD_TOTAL"); tv != "" {
		return nil, "", fmt.Errorf("DRYFIRE_SHARD_TOTAL=%q is set but no shard index is: set DRYFIRE_SHARD_INDEX (1 to the total) too", tv)
	}
	return nil, "", fmt.Errorf("no shard index in the environment: set DRYFIRE_SHARD_INDEX (1-based) and DRYFIRE_SHARD_TOTAL (e.g. from a GitHub Actions matrix), " +
		"or run under GitLab CI parallel: (CI_NODE_INDEX), CircleCI parallelism (CIRCLE_NODE_INDEX), Buildkite parallelism (BUILDKITE_PARALLEL_JOB), " +
		"Cloud Run Jobs (CLOUD_RUN_TASK_INDEX), an AWS Batch array job (AWS_BATCH_JOB_ARRAY_INDEX) " +
		"or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with --shard auto/N); or give --shard I/N")
}

// envNumber reads a shard variable: decimal digits only, at most
// report.MaxShards. What is wrong with another value is said: the first
// character that is not a digit (a sign, a space, a letter) and where.
func envNumber(name, v string) (int, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < '0' || c > '9' {
			what := fmt.Sprintf("%q", v[i:i+1])
			switch {
			case c == '-' || c == '+':
				what = "a sign " + what
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				what = "white space " + what
			case c == '.' || c == ',':
				what = "a fraction or separator " + what
			case c >= 0x80:
				what = "a byte that is not ASCII"
			}
			return 0, fmt.Errorf("%s=%q is not a shard number: it has %s at byte %d, and a shard number is decimal digits only (0-9)", name, v, what, i+1)
		}
	}
	if v == "" {
		return 0, fmt.Errorf("%s is empty: a shard number is decimal digits (0-9)", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n > report.MaxShards {
		return 0, fmt.Errorf("%s=%q is too large: a run has at most %d shards", name, v, report.MaxShards)
	}
	return n, nil
}
