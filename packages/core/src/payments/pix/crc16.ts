/**
 * CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR) as
 * four upper-case hex digits: the checksum of a BR Code's field 63 (Manual do BR Code, "CRC16").
 * It runs over the UTF-8 bytes, which are the characters themselves for the ASCII a BR Code carries.
 */
export const crc16Ccitt = (text: string): string => {
  let crc = 0xffff
  for (const byte of new TextEncoder().encode(text)) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, "0")
}
