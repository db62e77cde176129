/**
 * The Electronic Address Scheme (EAS) codes an endpoint's scheme must be one of: the CEF EAS code
 * list as the CEN EN 16931 validation artefacts 1.3.16 check it (BR-CL-25), and the codes Peppol
 * BIS Billing 3.0.19 accepts (PEPPOL-EN16931-CL008). The numeric ones are ISO 6523 ICDs (`0088`
 * GLN, `9930` German VAT…); `EM` is an e-mail address, which Peppol does not route.
 */
const CEN_NUMERIC = (
  '0002 0007 0009 0037 0060 0088 0096 0097 0106 0130 0135 0142 0147 0151 0154 0158 0170 0177 0183 0184 0188 0190 0191 0192 0193 0194 ' +
  '0195 0196 0198 0199 0200 0201 0202 0203 0204 0205 0208 0209 0210 0211 0212 0213 0215 0216 0217 0218 0219 0220 0221 0225 0230 0235 ' +
  '0240 0242 0244 0245 0246 0248 9910 9913 9914 9915 9918 9919 9920 9922 9923 9924 9925 9926 9927 9928 9929 9930 9931 9932 9933 9934 ' +
  '9935 9936 9937 9938 9939 9940 9941 9942 9943 9944 9945 9946 9947 9948 9949 9950 9951 9952 9953 9957 9959'
).split(' ');

/** Codes of the CEN list that Peppol's rules do not accept yet. */
const NOT_IN_PEPPOL = new Set(['0219', '0220', '0242', '0244', '0245', '0246', '0248']);

export const CEN_EAS_CODES: ReadonlySet<string> = new Set([...CEN_NUMERIC, 'AN', 'AQ', 'AS', 'AU', 'EM']);
export const PEPPOL_EAS_CODES: ReadonlySet<string> = new Set(CEN_NUMERIC.filter((code) => !NOT_IN_PEPPOL.has(code)));
