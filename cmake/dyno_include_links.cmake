# dyno_include_links(INCLUDE_DIR SOURCE_DIR): INCLUDE_DIR/dyno/ holds links to SOURCE_DIR's header
# folders and dyno.h, so that every header is included by the path it is installed under,
# "dyno/<folder>/<name>.h", and a user's own folders of the same names (a workloads/workload.h of
# theirs) cannot stand in for dyno's.
function(dyno_include_links include_dir source_dir)
  file(MAKE_DIRECTORY ${include_dir}/dyno)
  foreach(part reports suite trials tuner workloads include/dyno/dyno.h)
    get_filename_component(name ${part} NAME)
    file(REMOVE ${include_dir}/dyno/${name})
    file(CREATE_LINK ${source_dir}/${part} ${include_dir}/dyno/${name} SYMBOLIC)
  endforeach()
endfunction()
