"""Issue 11 item 12: the exit status of a normal run. The JobSet pod webhook refusing an exclusive-placement
follower until its leader is scheduled is upstream's design (the Job controller retries the pod), so such
a run succeeds; only objects that can never be created make it fail."""

from __future__ import annotations

from pathlib import Path

from tests.simulate.harness import load, run_json, write_scenario

EXCLUSIVE_JOBSET = """\
    apiVersion: jobsetctl.dev/v1alpha1
    kind: Scenario
    metadata: {name: exclusive}
    spec:
      kubernetesVersion: "1.36"
      nodes:
      - name: node
        count: 4
        capacity: {cpu: "4", memory: 16Gi}
        topology: [{key: example.com/rack, count: 2}]
      submit:
      - at: 0s
        objects:
        - apiVersion: jobset.x-k8s.io/v1alpha2
          kind: JobSet
          metadata:
            name: js
            annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: example.com/rack}
          spec:
            replicatedJobs:
            - name: w
              replicas: 2
              template:
                spec:
                  parallelism: 2
                  completions: 2
                  template:
                    metadata: {annotations: {jobsetctl.dev/duration: 10m}}
                    spec:
                      restartPolicy: Never
                      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
    """


def test_followers_refused_until_their_leader_is_scheduled_do_not_fail_the_run(tmp_path: Path) -> None:
    text, outcome = run_json(write_scenario(tmp_path, EXCLUSIVE_JOBSET))
    document = load(text)
    refused = [e for e in document["events"] if e["event"] == "Rejected"]
    assert refused, "the followers are created before their leaders are scheduled"
    assert all(e["kind"] == "Pod" and e["reason"] == "Forbidden" and e["transient"] is True for e in refused)
    assert {e["message"] for e in refused} <= {
        'admission webhook "vpod.kb.io" denied the request: follower pod node selector not set',
        'admission webhook "vpod.kb.io" denied the request: leader pod not yet scheduled, not creating follower '
        'pod. this is an expected, transient error'}
    assert [e["event"] for e in document["events"] if e["kind"] == "JobSet"][-1] == "Completed"
    assert document["summary"]["rejected"] == 0
    assert not outcome.failed


def test_an_object_that_can_never_be_created_still_fails_the_run(tmp_path: Path) -> None:
    scenario = EXCLUSIVE_JOBSET.replace("name: js\n", "name: Bad_Name\n")
    text, outcome = run_json(write_scenario(tmp_path, scenario))
    refused = [e for e in load(text)["events"] if e["event"] == "Rejected"]
    assert [(e["kind"], e["name"], e.get("transient")) for e in refused] == [("JobSet", "Bad_Name", None)]
    assert outcome.failed
