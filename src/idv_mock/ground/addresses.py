"""Host names and addresses as the operating system reads them, for the mock's own checks.

Comparing the text of a host finds ``127.0.0.1`` but not ``127.1``, ``2130706433``,
``0x7f000001`` or a name that resolves to a loopback address: the probe of issue 27 reached
the server's own ``/__admin/reset`` and the metadata address by such spellings. So the
webhook host rule resolves first (the system resolver reads every spelling the connection
would) and checks each address it got (the OWASP SSRF cheat sheet), and the request then
goes to the address that was checked, with no second look-up a rebinding name could change.
"""

from __future__ import annotations

import ipaddress
import socket
from contextlib import suppress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def literal(host: str) -> Address | None:
    """``host`` as an IP address when it is written as one in any spelling the resolver
    takes (``127.1``, ``2130706433``, ``0x7f.1``, ``[::1]``), else None (a name)."""
    text = host.strip("[]")
    with suppress(ValueError):
        return plain(ipaddress.ip_address(text))
    with suppress(OSError, ValueError):  # inet_aton: the BSD forms (decimal, hex, octal, short)
        if text and text[-1].isalnum() and all(c.isalnum() or c == "." for c in text):
            return ipaddress.IPv4Address(socket.inet_aton(text))
    return None


def plain(address: Address) -> Address:
    """An IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) as the IPv4 address it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def resolve(host: str, port: int) -> list[Address]:
    """Every address ``host`` resolves to (a literal to itself); raises OSError when it
    does not resolve."""
    found = literal(host)
    if found is not None:
        return [found]
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[Address] = []
    for info in infos:
        address = plain(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]))
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise OSError(f"{host} resolves to no address")
    return addresses


def is_own(address: Address) -> bool:
    """Whether ``address`` belongs to this machine (loopback, unspecified, or one of its
    interfaces'): a socket can be bound to it. A server bound to ``0.0.0.0`` answers on
    every one of them, its LAN address included."""
    if address.is_loopback or address.is_unspecified:
        return True
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((str(address), 0))
    except OSError:
        return False
    return True
