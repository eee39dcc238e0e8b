"""Wire codecs of the API server (JSON, YAML, Kubernetes protobuf)."""
