
ByJ ™L}L–L†LˆL®L£LŸLLœL©L˜L§LÆLŠL¢L