# `cmake --build BUILD --target package`: gtmesh_VERSION_amd64.deb (CPack DEB).
#
#   /usr/bin/gtmesh, /usr/bin/gtmeshctl
#   /lib/systemd/system/gtmesh-decider.service, gtmesh-agent@.service
#   /etc/gtmesh/gtmesh.yaml, decider.env               conffiles: an edited one is never overwritten
#   /usr/share/doc/gtmesh/                             deploy.md, examples (agent env, alerts)
#   /usr/share/man/man1/gtmesh.1.gz, gtmeshctl.1.gz    from the commands' --help
#
# postinst creates the gtmesh system user and /var/lib/gtmesh (0750);
# postrm removes both on purge only (deploy/debian/). Dependencies come from
# the shared libraries actually linked (dpkg-shlibdeps).

include(GNUInstallDirs)

install(TARGETS gtmesh gtmeshctl RUNTIME DESTINATION bin)
# Debian 12 ships units in /lib (the /usr merge moratorium).
install(FILES deploy/systemd/gtmesh-decider.service deploy/systemd/gtmesh-agent@.service
        DESTINATION /lib/systemd/system)
install(FILES deploy/configs/gtmesh.yaml deploy/configs/decider.env DESTINATION /etc/gtmesh)
install(FILES docs/deploy.md DESTINATION share/doc/gtmesh)
install(FILES deploy/configs/agent-fra.env deploy/prometheus/gtmesh-alerts.yml
        DESTINATION share/doc/gtmesh/examples)
install(FILES deploy/debian/copyright DESTINATION share/doc/gtmesh)
# A native package's changelog, compressed as policy wants.
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/debian/changelog.gz
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/deploy/debian/changelog > ${PROJECT_BINARY_DIR}/debian/changelog.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/deploy/debian/changelog)
add_custom_target(debian_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog.gz)
install(FILES ${PROJECT_BINARY_DIR}/debian/changelog.gz DESTINATION share/doc/gtmesh)

# Man pages from each command's --help (help2man-free: the usage text is
# the page), gzipped as Debian policy wants.
set(GTMESH_MAN_DIR ${PROJECT_BINARY_DIR}/man)
foreach(cmd gtmesh gtmeshctl)
  add_custom_command(
    OUTPUT ${GTMESH_MAN_DIR}/${cmd}.1.gz
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:${cmd}> -DNAME=${cmd} -DVERSION=${PROJECT_VERSION}
            -DOUT=${GTMESH_MAN_DIR}/${cmd}.1 -P ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
    COMMAND gzip -9nf ${GTMESH_MAN_DIR}/${cmd}.1
    DEPENDS ${cmd} ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
    VERBATIM)
  list(APPEND GTMESH_MAN_PAGES ${GTMESH_MAN_DIR}/${cmd}.1.gz)
endforeach()
add_custom_target(man_pages ALL DEPENDS ${GTMESH_MAN_PAGES})
install(FILES ${GTMESH_MAN_PAGES} DESTINATION share/man/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gtmesh)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gtmesh maintainers <gtmesh@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "global traffic manager: health-aware authoritative DNS across datacenters")
set(CPACK_PACKAGE_DESCRIPTION "gtmesh answers DNS for services that run in several datacenters.\n\
Agents in every datacenter measure hosts, services and the paths to\n\
clients; deciders turn the measurements and the operator's policy into\n\
answers, replicated with Raft; the built-in authoritative DNS responder\n\
serves them.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.org/gtmesh")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "passwd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "dnsutils, prometheus")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
configure_file(deploy/debian/conffiles ${PROJECT_BINARY_DIR}/debian/conffiles COPYONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_BINARY_DIR}/debian/conffiles
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
# Stripped binaries, as Debian ships them.
set(CPACK_STRIP_FILES ON)
include(CPack)
