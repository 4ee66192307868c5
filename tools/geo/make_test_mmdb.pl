#!/usr/bin/perl
# Writes the small GeoIP2-City-shaped test database gtmesh's tests use
# (tests/data/test.mmdb). Needs Debian's libmaxmind-db-writer-perl; the
# generated file is committed, so tests never need perl.
#
#   perl tools/geo/make_test_mmdb.pl tests/data/test.mmdb
#
# Only documentation/test and shared address space is used (RFC 5737,
# RFC 6598, RFC 3849), plus loopback so that a demo queried from 127.0.0.1
# has a country. Real deployments point geo.database at GeoLite2-City.mmdb,
# GeoLite2-Country.mmdb or a DB-IP city/country lite database instead.
use strict;
use warnings;
use MaxMind::DB::Writer::Tree;

my $out = shift or die "usage: $0 OUT.mmdb\n";

my %types = (
    city         => 'map',
    continent    => 'map',
    country      => 'map',
    registered_country => 'map',
    location     => 'map',
    subdivisions => ['array', 'map'],
    code         => 'utf8_string',
    iso_code     => 'utf8_string',
    names        => 'map',
    en           => 'utf8_string',
    latitude     => 'double',
    longitude    => 'double',
    geoname_id   => 'uint32',
    traits       => 'map',
    is_anycast   => 'boolean',
);

my $tree = MaxMind::DB::Writer::Tree->new(
    ip_version            => 6,
    record_size           => 24,
    database_type         => 'GeoIP2-City',
    languages             => ['en'],
    description           => { en => 'gtmesh test geo database' },
    map_key_type_callback => sub { $types{ $_[0] } },
    remove_reserved_networks => 0,
    alias_ipv6_to_ipv4    => 1,
);

sub place {
    my ($continent, $country, $sub, $lat, $lon, $name) = @_;
    my %r = (
        continent => { code => $continent },
        country   => { iso_code => $country, names => { en => $name } },
        registered_country => { iso_code => $country },
        location  => { latitude => $lat, longitude => $lon },
    );
    $r{subdivisions} = [ { iso_code => $sub } ] if $sub;
    return \%r;
}

# A network the database places on a continent only (MaxMind's own test
# databases map 2a02:d500::/29 and others to EU with no country, as the
# commercial editions do for EU-wide and anycast ranges), and one with
# nothing but traits.
sub continent_only {
    my ($continent) = @_;
    return { continent => { code => $continent } };
}

my @networks = (
    [ '192.0.2.0/25',     place('NA', 'US', 'CA',  37.39, -122.08, 'United States') ],
    [ '192.0.2.128/25',   place('NA', 'US', 'NY',  40.71,  -74.01, 'United States') ],
    [ '198.51.100.0/24',  place('EU', 'DE', 'HE',  50.11,    8.68, 'Germany') ],
    [ '203.0.113.0/24',   place('EU', 'IE', 'L',   53.35,   -6.26, 'Ireland') ],
    [ '100.64.0.0/16',    place('OC', 'AU', 'QLD', -27.47, 153.03, 'Australia') ],
    [ '100.65.0.0/16',    place('NA', 'CA', 'AB',  51.05, -114.07, 'Canada') ],
    [ '100.66.0.0/16',    place('AS', 'AE', undef, 25.20,   55.27, 'United Arab Emirates') ],
    [ '100.67.0.0/16',    place('AS', 'JP', undef, 35.68,  139.69, 'Japan') ],
    [ '100.68.0.0/16',    place('SA', 'BR', undef, -23.55, -46.63, 'Brazil') ],
    [ '100.69.0.0/16',    place('AF', 'ZA', undef, -33.92,  18.42, 'South Africa') ],
    [ '100.70.0.0/16',    place('EU', 'FR', undef, 48.86,    2.35, 'France') ],
    [ '127.0.0.0/8',      place('EU', 'DE', 'HE',  50.11,    8.68, 'Germany') ],
    [ '2001:db8:1::/48',  place('EU', 'DE', 'HE',  50.11,    8.68, 'Germany') ],
    [ '2001:db8:2::/48',  place('NA', 'US', 'CA',  37.39, -122.08, 'United States') ],
    [ '::1/128',          place('EU', 'DE', 'HE',  50.11,    8.68, 'Germany') ],
    [ '100.71.0.0/16',    continent_only('EU') ],
    [ '2001:db8:e0::/48', continent_only('EU') ],
    [ '2001:db8:e1::/48', continent_only('AS') ],
    [ '100.72.0.0/16',    { traits => { is_anycast => 1 } } ],
);
$tree->insert_network($_->[0], $_->[1]) for @networks;

open my $fh, '>:raw', $out or die "cannot write $out: $!\n";
$tree->write_tree($fh);
close $fh;
print "wrote $out (" . scalar(@networks) . " networks)\n";
