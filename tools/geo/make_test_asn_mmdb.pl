#!/usr/bin/perl
# Writes the small GeoLite2-ASN-shaped test database gtmesh's tests use
# (tests/data/test-asn.mmdb): real-user measurements by autonomous system
# (docs/rum.md, "Levels"). Needs Debian's libmaxmind-db-writer-perl; the
# generated file is committed, so tests never need perl.
#
#   perl tools/geo/make_test_asn_mmdb.pl tests/data/test-asn.mmdb
#
# Private-use AS numbers (RFC 6996) on the networks tests/data/test.mmdb
# places: 100.70.0.0/16 is France there, split here between two systems, so
# that two client networks of one country can be told apart by their ASN.
# Real deployments point geo.asn_database at GeoLite2-ASN.mmdb (or DB-IP's
# ASN lite edition).
use strict;
use warnings;
use MaxMind::DB::Writer::Tree;

my $out = shift or die "usage: $0 OUT.mmdb\n";

my %types = (
    autonomous_system_number       => 'uint32',
    autonomous_system_organization => 'utf8_string',
);

my $tree = MaxMind::DB::Writer::Tree->new(
    ip_version            => 6,
    record_size           => 24,
    database_type         => 'GeoLite2-ASN',
    languages             => ['en'],
    description           => { en => 'gtmesh test ASN database' },
    map_key_type_callback => sub { $types{ $_[0] } },
    remove_reserved_networks => 0,
    alias_ipv6_to_ipv4    => 1,
);

sub as {
    my ($number, $name) = @_;
    return { autonomous_system_number => $number, autonomous_system_organization => $name };
}

my @networks = (
    [ '100.70.0.0/17',    as(64500, 'Example Transit FR') ],
    [ '100.70.128.0/17',  as(64501, 'Example Mobile FR') ],
    [ '198.51.100.0/24',  as(64502, 'Example Cable DE') ],
    [ '203.0.113.0/24',   as(64503, 'Example Fibre IE') ],
    [ '127.0.0.0/8',      as(64510, 'Loopback Example') ],
    [ '2001:db8:1::/48',  as(64502, 'Example Cable DE') ],
    [ '::1/128',          as(64510, 'Loopback Example') ],
);
$tree->insert_network($_->[0], $_->[1]) for @networks;

open my $fh, '>:raw', $out or die "cannot write $out: $!\n";
$tree->write_tree($fh);
close $fh;
print "wrote $out (" . scalar(@networks) . " networks)\n";
