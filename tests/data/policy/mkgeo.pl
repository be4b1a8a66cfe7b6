#!/usr/bin/perl
# Writes a small MaxMind DB for tests/unit/test_geo.c: country, ASN and organisation for
# a few lab ranges (198.18.0.0/15, 2001:db8::/32), in the GeoLite2 field layout
# (country.iso_code, autonomous_system_number, autonomous_system_organization).
# Usage: mkgeo.pl OUT.mmdb
use strict;
use warnings;
use MaxMind::DB::Writer::Tree;

my $out = shift or die "usage: $0 OUT.mmdb\n";
my %types = (
	country                        => 'map',
	registered_country             => 'map',
	iso_code                       => 'utf8_string',
	autonomous_system_number       => 'uint32',
	autonomous_system_organization => 'utf8_string',
);
my $tree = MaxMind::DB::Writer::Tree->new(
	ip_version               => 6,
	record_size              => 24,
	database_type            => 'sandgate-test-geo',
	languages                => ['en'],
	description              => { en => 'sandgate test database (lab ranges only)' },
	alias_ipv6_to_ipv4       => 1,
	remove_reserved_networks => 0,   # the lab ranges are reserved ones
	map_key_type_callback    => sub { $types{ $_[0] } },
);
$tree->insert_network('198.18.0.0/16', {
	country => { iso_code => 'DE' },
	autonomous_system_number => 64496,
	autonomous_system_organization => 'Lab Transit A',
});
$tree->insert_network('198.18.7.0/24', {   # ASN only: country unknown
	autonomous_system_number => 64499,
	autonomous_system_organization => 'Lab Partial',
});
$tree->insert_network('198.19.0.0/16', {   # registered country only
	registered_country => { iso_code => 'FR' },
	autonomous_system_number => 64497,
	autonomous_system_organization => 'Lab Transit B',
});
$tree->insert_network('198.19.9.0/24', {   # an organisation name longer than 127 bytes
	country => { iso_code => 'FR' },
	autonomous_system_number => 64500,
	autonomous_system_organization => ('Lab Org With A Very Long Name ' x 4) . "abcdef\x{e9}",
});
$tree->insert_network('2001:db8::/32', {
	country => { iso_code => 'NL' },
	autonomous_system_number => 64498,
	autonomous_system_organization => 'Lab IPv6 Org',
});
open(my $fh, '>:raw', $out) or die "$out: $!\n";
$tree->write_tree($fh);
close($fh) or die "$out: $!\n";
