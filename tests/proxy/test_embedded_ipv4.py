"""Proxy mode refuses a tunnel to a non-public address, and an IPv6 address that carries an IPv4 one
is judged by both: IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64 (well-known and local-use
prefixes), 6to4 and Teredo. Each form with a private, loopback, link-local, shared, unspecified and a
public embedded address, and the near misses just outside each prefix."""

from __future__ import annotations

import ipaddress

import pytest

from inspector.proxy.connect import public_address

NOT_PUBLIC = ["10.0.0.1", "172.16.5.4", "192.168.1.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
              "255.255.255.255", "192.0.2.1"]
PUBLIC = ["8.8.8.8", "93.184.216.34", "1.1.1.1"]


def last_32(prefix: str, v4: str) -> str:
    return str(ipaddress.IPv6Address(int(ipaddress.IPv6Address(prefix)) | int(ipaddress.IPv4Address(v4))))


def six_to_four(v4: str) -> str:
    return str(ipaddress.IPv6Address((0x2002 << 112) | (int(ipaddress.IPv4Address(v4)) << 80) | 1))


def teredo(server: str, client: str) -> str:
    return str(ipaddress.IPv6Address((0x20010000 << 96) | (int(ipaddress.IPv4Address(server)) << 64)
                                     | (0x8000 << 48) | (0xFFFF ^ 40000) << 32
                                     | (int(ipaddress.IPv4Address(client)) ^ 0xFFFFFFFF)))


FORMS = {
    "mapped": lambda v4: last_32("::ffff:0:0", v4),
    "translated": lambda v4: last_32("::ffff:0:0:0", v4),
    "compatible": lambda v4: last_32("::", v4),
    "nat64": lambda v4: last_32("64:ff9b::", v4),
    "6to4": six_to_four,
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("v4", NOT_PUBLIC)
def test_an_embedded_non_public_ipv4_makes_the_address_not_public(form, v4):
    assert (FORMS[form](v4), public_address(FORMS[form](v4))) == (FORMS[form](v4), False)


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("v4", PUBLIC)
def test_an_embedded_public_ipv4_leaves_the_address_public(form, v4):
    assert (FORMS[form](v4), public_address(FORMS[form](v4))) == (FORMS[form](v4), True)


def test_the_forms_are_built_as_their_rfcs_say():
    assert [FORMS[form]("10.0.0.1") for form in sorted(FORMS)] == [
        "2002:a00:1::1", "::a00:1", "::ffff:a00:1", "64:ff9b::a00:1", "::ffff:0:a00:1"]
    assert ipaddress.IPv6Address(teredo("65.54.227.120", "10.0.0.1")).teredo == (
        ipaddress.IPv4Address("65.54.227.120"), ipaddress.IPv4Address("10.0.0.1"))


@pytest.mark.parametrize(("server", "client"), [("65.54.227.120", "10.0.0.1"), ("10.0.0.1", "8.8.8.8"),
                                                ("65.54.227.120", "8.8.8.8"), ("127.0.0.1", "127.0.0.1")])
def test_teredo_is_never_public_whatever_it_embeds(server, client):
    # 2001::/32 is not globally reachable (IANA): where a packet goes is the relay's choice.
    assert public_address(teredo(server, client)) is False


@pytest.mark.parametrize("address", ["64:ff9b:1::a00:1", "64:ff9b:1::808:808", "64:ff9b:1:ffff::808:808"])
def test_the_local_use_nat64_prefix_is_never_public(address):
    # RFC 8215: its embedded IPv4 sits where the local operator's prefix length puts it.
    assert public_address(address) is False


@pytest.mark.parametrize(("address", "public"), [
    # Just outside each prefix: judged as the IPv6 address it is.
    ("64:ff9a:ffff:ffff:ffff:ffff:a00:1", True), ("64:ff9b:0:0:0:1:a00:1", True), ("64:ff9b:2::a00:1", True),
    ("2003:a00:1::1", True), ("2001:4860:4860::8888", True), ("2001:1::a00:1", False),
    ("::1:0:a00:1", True), ("::ffff:1:a00:1", True), ("fe80::a00:1", False), ("fc00::a00:1", False),
    ("::1", False), ("::", False),
    ("fe80::1%eth0", False),
    # The IPv4 forms themselves, for comparison.
    ("10.0.0.1", False), ("8.8.8.8", True),
])
def test_near_misses_are_judged_as_plain_ipv6(address, public):
    assert public_address(address) is public
