"""Resource quota accounting shared by the quota controller and the ResourceQuota admission plugin, as upstream's
k8s.io/apiserver/pkg/quota/v1 and pkg/quota/v1/evaluator/core: resource lists of quantities, and the evaluators
that say what an object uses and which quotas it falls under."""
