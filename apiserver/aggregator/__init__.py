"""The aggregation layer (upstream's kube-aggregator): APIServices that name a Service are served by that
extension API server. `availability` checks each one and keeps its status and the discovery documents;
`proxy` forwards requests to it as the authenticated user (front-proxy headers, the aggregator's client
certificate); `authentication_config` publishes what extension servers need to trust those headers."""
