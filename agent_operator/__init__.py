"""The Agent operator: Agent and ServingRuntime custom resources (group `mini-kube.dev`, `v1alpha1`) reconciled
into a ConfigMap, a Deployment and a Service per Agent.

- `api.py`: the resources, labels and names the operator uses;
- `render.py`: the desired children of an Agent (pure functions);
- `conditions.py`: the Agent's status from its children;
- `controller.py`: the reconciler (`AgentController`);
- `operator.py`: the operator process (`mini-kube operator`): leader election and a status endpoint;
- `server.py`: the default runtime's program, a small HTTP server answering with the agent's config.

Manifests (CRDs, RBAC, the operator's Deployment, examples) are in `deploy/agent-operator/`.
"""
