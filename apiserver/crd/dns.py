"""Name checks for CRDs and custom resources: machinery.names, bound the way this module answered.

The CRD code had its own copy of these checks; it now calls the shared ones with two differences kept, so
CRD validation answers exactly as before (both differ from upstream, which rejects and hints):
- `newline_ok`: the copy anchored its regexes with Python's `$`, so one trailing newline passed the pattern;
- `dots_hint=False`: a namespace that is a subdomain but not a label got the regex message, not
  "must not contain dots".
"""

from __future__ import annotations

from functools import partial

from mini_kube.machinery import names

dns1035_label = partial(names.is_dns1035_label, newline_ok=True)
dns1123_label = partial(names.is_dns1123_label, newline_ok=True, dots_hint=False)
dns1123_subdomain = partial(names.is_dns1123_subdomain, newline_ok=True)
qualified_name = partial(names.is_qualified_name, newline_ok=True)
label_value = partial(names.is_valid_label_value, newline_ok=True)
path_segment_name = names.path_segment_name
