
ByJ«H´H¢HÑH»H¹H·H€HˆHžHÁH¨H¶HéHºH·HÛHØH—HœHºHqHtH€H‚HnHwHšHŸHÁH‡H•H°H­HÀH¾HH´HØHxH±HåHH H«H›HœH«HßHØH²H³HèHÃH†H„HRHŽH¨H˜H­H¬HžH«H©H®H¶HÎHÀHHHœH