"""`python -m mini_kube.kubelet.agnhost [--argv0=/agnhost] SUBCOMMAND [flags]`: run one agnhost subcommand
(usage without one); `--argv0` is the program name the container's command gave (entrypoint-tester prints it)."""

from __future__ import annotations

import importlib
import os
import sys

SUBCOMMANDS = {
    "pause": ("pause", "Pauses the execution"),
    "serve-hostname": ("serve_hostname", "Serves the hostname"),
    "netexec": ("netexec", "Creates HTTP(S), UDP, and (optionally) SCTP servers with various endpoints"),
    "test-webserver": ("test_webserver", "Starts a simple HTTP fileserver"),
    "porter": ("porter", "Serves requested data on ports specified in ENV variables"),
    "liveness": ("liveness", "Starts a server that is alive for 10 seconds"),
    "entrypoint-tester": ("entrypoint_tester", "Prints the args it's passed and exits"),
    "mounttest": ("mounttest", "Creates files with given permissions and outputs FS type, owner, mode, "
                               "permissions, contents of files"),
    "logs-generator": ("logs_generator", "Outputs lines of logs to stdout uniformly"),
    "etc-hosts": ("dns:etc_hosts", "Prints the host's /etc/hosts file"),
    "dns-suffix": ("dns:dns_suffix", "Prints the host's DNS suffix list"),
    "dns-server-list": ("dns:dns_server_list", "Prints the host's DNS Server list"),
    "nettest": ("nettest", "Starts a tiny web server for checking networking connectivity"),
    "inclusterclient": ("inclusterclient", 'Periodically poll the Kubernetes "/healthz" endpoint'),
    "guestbook": ("guestbook", "Creates a HTTP server with various endpoints representing a guestbook app"),
    "grpc-health-checking": ("grpc_health_checking", "Starts a simple grpc health checking endpoint"),
    "port-forward-tester": ("port_forward_tester", "Creates a TCP server that sends chunks of data"),
    "webhook": ("webhook", "Starts a HTTP server, useful for testing MutatingAdmissionWebhook and "
                           "ValidatingAdmissionWebhook"),
    "crd-conversion-webhook": ("crd_conversion_webhook", "Starts HTTP server on port 443 for testing "
                                                         "CustomResourceConversionWebhook"),
    "test-service-account-issuer-discovery": ("issuer_discovery", "Tests the ServiceAccountIssuerDiscovery "
                                                                  "feature"),
}


def usage() -> str:
    """cobra's usage text for the root command."""
    width = max(map(len, SUBCOMMANDS))
    lines = ["Usage:", "  app [command]", "", "Available Commands:"]
    lines += [f"  {name.ljust(width)} {short}" for name, (_module, short) in sorted(SUBCOMMANDS.items())]
    lines += ["", 'Use "app [command] --help" for more information about a command.']
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dispatch to the subcommand's module."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0].startswith("--argv0="):  # the binary the container's command named (kubelet/entrypoints)
        os.environ["AGNHOST_ARGV0"] = args.pop(0).partition("=")[2]
    if not args or args[0] in ("help", "-h", "--help"):
        print(usage())
        return 0
    entry = SUBCOMMANDS.get(args[0])
    if entry is None:
        print(f'Error: unknown command "{args[0]}" for "app"\nRun \'app --help\' for usage.', file=sys.stderr)
        return 1
    module_name, _, function = entry[0].partition(":")  # `module` (its main) or `module:function`
    module = importlib.import_module(f"{__package__}.{module_name}")
    return getattr(module, function or "main")(args[1:])


if __name__ == "__main__":
    sys.exit(main())
