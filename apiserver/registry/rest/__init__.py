"""Subresources as registry-level REST objects, as upstream's pkg/registry/rest storages (StatusREST, ScaleREST,
BindingREST, EvictionREST): each takes decoded objects, works through the generic registry and answers objects or
raises Status errors. The HTTP handlers only decode requests and encode what these answer; admission uses them too.
"""
