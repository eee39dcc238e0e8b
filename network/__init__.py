"""The cluster network: network namespaces made and held by mini-kube, a bridge for pod IPs, and sockets
created inside them. Nothing here ever adds an address or a route to the machine's own namespace."""
