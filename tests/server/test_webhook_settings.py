"""The webhook settings, the address rules and the signature, without a server.

- A signature the server makes is one the docs' `verify` (examples/webhook_verify.py) accepts, for any
  body, id, time and secret (plain or `whsec_`), and one changed byte, another id, another secret or a
  time outside the tolerance is refused (properties).
- Every address of the networks that are not public is refused (in its IPv4 form, IPv4-mapped IPv6 and
  NAT64), unless `allow` names the address, its network or the host; public ones pass (properties).
- Settings are checked: a secret too short, bad base64 after `whsec_`, an `allow` entry that is no host
  or network, times out of bounds; a `langgraph.json`'s `webhooks` object is read, LangGraph's own keys
  there named in a warning; the command line reads the secret from the environment the file's `env` set,
  and refuses the webhook options beside a TARGET.
"""

from __future__ import annotations

import base64
import importlib.util
import ipaddress
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actorgraph import ConfigError
from actorgraph.server import Webhooks
from actorgraph.server._config import read_config
from actorgraph.server._serve import served_settings
from actorgraph.server._webhook_delivery import signed_headers
from actorgraph.server._webhooks import Allowed, _refusal, signing_key, target_of, webhooks_of

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("webhook_verify", ROOT / "examples" / "webhook_verify.py")
assert _spec is not None and _spec.loader is not None
docs_verify = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_verify)

secrets_ = st.one_of(
    st.text(st.characters(codec="utf-8"), min_size=24, max_size=60).filter(
        lambda s: not s.startswith("whsec_")
    ),
    st.binary(min_size=24, max_size=64).map(lambda key: "whsec_" + base64.b64encode(key).decode()),
)
ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,40}", fullmatch=True)
NOW = 1_800_000_000


@pytest.mark.slow  # a property: many examples
@given(secret=secrets_, webhook_id=ids, body=st.binary(max_size=300), skew=st.integers(-300, 300))
def test_a_signed_delivery_is_verified_by_the_docs_receiver(secret, webhook_id, body, skew):
    headers = signed_headers(signing_key(secret), webhook_id, body, timestamp=NOW)
    assert docs_verify.verify(secret, headers, body, now=NOW + skew)


@pytest.mark.slow  # a property: many examples
@given(secret=secrets_, webhook_id=ids, body=st.binary(min_size=1, max_size=300), data=st.data())
def test_a_changed_delivery_is_refused_by_the_docs_receiver(secret, webhook_id, body, data):
    headers = signed_headers(signing_key(secret), webhook_id, body, timestamp=NOW)
    at = data.draw(st.integers(0, len(body) - 1))
    changed = body[:at] + bytes([body[at] ^ data.draw(st.integers(1, 255))]) + body[at + 1 :]
    assert not docs_verify.verify(secret, headers, changed, now=NOW)
    assert not docs_verify.verify(secret, {**headers, "webhook-id": webhook_id + "x"}, body, now=NOW)
    other = data.draw(secrets_.filter(lambda s: signing_key(s) != signing_key(secret)))
    assert not docs_verify.verify(other, headers, body, now=NOW)
    assert not docs_verify.verify(
        secret, headers, body, now=NOW + data.draw(st.sampled_from([-301, 301, 3600]))
    )


def test_the_signature_is_standard_webhooks():
    """The example of standardwebhooks.com's specification, signed here, gives its signature."""
    key = base64.b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    body = b'{"test": 2432232314}'
    headers = signed_headers(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", body, timestamp=1614265330)
    assert headers["webhook-signature"] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


NOT_PUBLIC = [
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "169.254.0.0/16", "100.64.0.0/10",
    "0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4", "192.0.2.0/24", "198.18.0.0/15",
]  # fmt: skip
addresses_not_public = st.sampled_from(NOT_PUBLIC).flatmap(
    lambda net: st.integers(0, ipaddress.ip_network(net).num_addresses - 1).map(
        lambda i: ipaddress.ip_network(net)[i]
    )
)


@pytest.mark.slow  # a property: many examples
@given(address=addresses_not_public)
def test_an_address_that_is_not_public_is_refused_in_every_form(address):
    target = target_of("https://hooks.example.com/runs")
    for form in (
        address,
        ipaddress.ip_address(f"::ffff:{address}"),
        ipaddress.ip_address(f"64:ff9b::{address}"),
    ):
        assert _refusal(target, form, Allowed()) is not None, form
    assert _refusal(target, address, Allowed.of([str(address)])) is None
    assert _refusal(target, address, Allowed.of([f"{address}/8"])) is None
    assert _refusal(target, address, Allowed.of(["hooks.example.com"])) is None
    assert _refusal(target, address, Allowed.of(["*.example.com"])) is None
    assert _refusal(target, address, Allowed.of(["example.com", "other.example.com"])) is not None


@pytest.mark.slow  # a property: many examples
@given(address=st.ip_addresses(v=4))
def test_a_public_address_passes(address):
    target = target_of("http://hooks.example.com/")
    assert (_refusal(target, address, Allowed()) is None) == (address.is_global and not address.is_multicast)


@pytest.mark.slow  # a property: many examples
@given(address=st.ip_addresses(v=6))
def test_ipv6_addresses_follow_the_same_rule(address):
    refused = _refusal(target_of("http://[::1]/"), address, Allowed()) is not None
    reached = address.ipv4_mapped or address.sixtofour or address
    if address in ipaddress.ip_network("64:ff9b::/96"):
        reached = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    assert refused == (not reached.is_global or reached.is_multicast)


@pytest.mark.parametrize(
    ("url", "host", "header"),
    [
        ("https://Hooks.Example.com/a?b=1", "hooks.example.com", "hooks.example.com"),
        ("http://hooks.example.com:8080/", "hooks.example.com", "hooks.example.com:8080"),
        ("https://[2001:db8::1]:8443/x", "2001:db8::1", "[2001:db8::1]:8443"),
        ("http://example.com./x", "example.com", "example.com"),
    ],
)
def test_a_url_is_parsed_into_its_host_and_host_header(url, host, header):
    target = target_of(url)
    assert (target.host, target.host_header) == (host, header)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"secret": "short"}, "too short"),
        ({"secret": "whsec_not*base64"}, "not base64"),
        ({"secret": "whsec_" + base64.b64encode(b"k" * 10).decode()}, "too short"),
        ({"secret": 12345}, "text"),
        ({"secret": "\udcff" * 30}, "UTF-8"),
        ({"allow": ["http://x/"]}, "not a host name"),
        ({"allow": ["a b"]}, "not a host name"),
        ({"allow": "10.0.0.0/8"}, "a list"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"retry_for": -1}, "retry_for"),
        ({"first_retry": True}, "first_retry"),
    ],
)
def test_bad_settings_are_refused_naming_them(options, words):
    with pytest.raises(ConfigError, match=words):
        Webhooks(**options)


def test_the_secret_is_never_shown():
    secret = "a-secret-nobody-may-read-in-a-log-0123"  # noqa: S105 - the test's own
    assert secret not in repr(Webhooks(secret=secret))
    assert secret not in str(Webhooks(secret=secret))


def test_a_config_files_webhooks_are_read_and_langgraphs_own_keys_named(tmp_path):
    config = {
        "graphs": {},
        "webhooks": {"allow": ["10.0.0.0/8"], "timeout": 5, "url": {"require_https": True}},
    }
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    settings = read_config(tmp_path / "langgraph.json")
    with pytest.warns(UserWarning, match="url not used"):
        hooks = webhooks_of(settings.webhooks, secret="s" * 24, allow=["hooks.internal"])
    assert hooks.allow == ("10.0.0.0/8", "hooks.internal")
    assert hooks.timeout == 5
    assert hooks.allowed.address(ipaddress.ip_address("10.1.2.3"))
    for bad, words in (({"webhooks": []}, "object"), ({"webhooks": {"allow": "x"}}, "a list")):
        (tmp_path / "langgraph.json").write_text(json.dumps(bad))
        with pytest.raises(ConfigError, match=words):
            webhooks_of(read_config(tmp_path / "langgraph.json").webhooks, secret=None)


def test_the_secret_comes_from_the_option_else_the_environment_the_config_set(tmp_path, monkeypatch):
    monkeypatch.delenv("ACTORGRAPH_WEBHOOK_SECRET", raising=False)
    (tmp_path / "graph_for_hooks.py").write_text("import actorgraph as ag\ngraph = ag.Graph()\n")
    (tmp_path / ".env").write_text("ACTORGRAPH_WEBHOOK_SECRET=from-the-env-file-0123456789\n")
    config = {"graphs": {"g": "./graph_for_hooks.py:graph"}, "env": ".env"}
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    monkeypatch.setattr(sys, "path", list(sys.path))
    _, hooks = served_settings(str(tmp_path / "langgraph.json"), (), webhook_secret=None, webhook_allow=())
    assert hooks.secret == "from-the-env-file-0123456789"  # noqa: S105 - the test's own
    given_secret = "given-on-the-command-line-0123"  # noqa: S105 - the test's own
    _, hooks = served_settings(
        str(tmp_path / "langgraph.json"), (), webhook_secret=given_secret, webhook_allow=()
    )
    assert hooks.secret == given_secret
    monkeypatch.delenv("ACTORGRAPH_WEBHOOK_SECRET")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["server", "-g", "g=x.py:graph", "--webhook-secret", "short"], "too short"),
        (["server", "-g", "g=x.py:graph", "--webhook-allow", "no such/host"], "not a host name"),
        (["worker", "x.py:graph", "--webhook-secret", "s" * 30], "go with --config or -g"),
    ],
)
def test_the_command_line_refuses_bad_webhook_options(tmp_path, argv, words):
    (tmp_path / "x.py").write_text("import actorgraph as ag\ngraph = ag.Graph()\n")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "actorgraph.cli", *argv, "--db", str(tmp_path / "x.db")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0, (done.stdout, done.stderr, time.monotonic() - started)
    assert words in done.stderr
    assert "Traceback" not in done.stderr
